//! Finds the line of a field in JSON text, so that a problem found after parsing (an unknown
//! series, a duplicate id) can still be reported as `FILE:LINE: field: message`.
//!
//! Field paths use the spelling of `serde_path_to_error`: `tasks[1].key_images[0].series`.

#[derive(Debug, PartialEq, Eq)]
enum Segment<'a> {
    Key(&'a str),
    Index(usize),
}

/// The 1-based line where the value at `field` starts, if the text has it.
pub fn line_of(text: &str, field: &str) -> Option<usize> {
    let segments = parse_field(field)?;
    let mut scanner = Scanner {
        bytes: text.as_bytes(),
        pos: 0,
        line: 1,
    };
    scanner.find(&segments)
}

fn parse_field(field: &str) -> Option<Vec<Segment<'_>>> {
    let mut segments = Vec::new();
    for part in field.split('.').filter(|p| !p.is_empty()) {
        let (key, mut rest) = match part.find('[') {
            Some(at) => (&part[..at], &part[at..]),
            None => (part, ""),
        };
        if !key.is_empty() {
            segments.push(Segment::Key(key));
        }
        while let Some(stripped) = rest.strip_prefix('[') {
            let close = stripped.find(']')?;
            segments.push(Segment::Index(stripped[..close].parse().ok()?));
            rest = &stripped[close + 1..];
        }
    }
    Some(segments)
}

struct Scanner<'a> {
    bytes: &'a [u8],
    pos: usize,
    line: usize,
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn bump(&mut self) -> Option<u8> {
        let byte = self.peek()?;
        self.pos += 1;
        if byte == b'\n' {
            self.line += 1;
        }
        Some(byte)
    }

    fn skip_whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.bump();
        }
    }

    fn find(&mut self, segments: &[Segment<'_>]) -> Option<usize> {
        self.skip_whitespace();
        let Some((first, rest)) = segments.split_first() else {
            return Some(self.line);
        };
        match (self.peek()?, first) {
            (b'{', Segment::Key(wanted)) => {
                self.bump();
                loop {
                    self.skip_whitespace();
                    if self.peek()? != b'"' {
                        return None;
                    }
                    let key_line = self.line;
                    let key = self.string()?;
                    self.skip_whitespace();
                    if self.bump()? != b':' {
                        return None;
                    }
                    if key == *wanted {
                        // A problem about a whole object reads best at its key's line.
                        return if rest.is_empty() {
                            Some(key_line)
                        } else {
                            self.find(rest)
                        };
                    }
                    self.skip_value()?;
                    self.skip_whitespace();
                    if self.bump()? != b',' {
                        return None;
                    }
                }
            }
            (b'[', Segment::Index(wanted)) => {
                self.bump();
                for index in 0.. {
                    self.skip_whitespace();
                    if self.peek()? == b']' {
                        return None;
                    }
                    if index == *wanted {
                        return self.find(rest);
                    }
                    self.skip_value()?;
                    self.skip_whitespace();
                    if self.bump()? != b',' {
                        return None;
                    }
                }
                None
            }
            _ => None,
        }
    }

    /// Reads a string's raw text (escapes left as they are: keys we look for have none).
    fn string(&mut self) -> Option<String> {
        self.bump();
        let start = self.pos;
        loop {
            match self.bump()? {
                b'\\' => {
                    self.bump()?;
                }
                b'"' => break,
                _ => {}
            }
        }
        String::from_utf8(self.bytes[start..self.pos - 1].to_vec()).ok()
    }

    fn skip_value(&mut self) -> Option<()> {
        self.skip_whitespace();
        match self.peek()? {
            b'"' => {
                self.string()?;
            }
            b'{' | b'[' => {
                let mut depth = 0usize;
                loop {
                    match self.peek()? {
                        b'"' => {
                            self.string()?;
                            continue;
                        }
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => depth -= 1,
                        _ => {}
                    }
                    self.bump();
                    if depth == 0 {
                        break;
                    }
                }
            }
            _ => {
                while !matches!(
                    self.peek(),
                    None | Some(b',' | b'}' | b']' | b' ' | b'\t' | b'\r' | b'\n')
                ) {
                    self.bump();
                }
            }
        }
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::line_of;

    const TEXT: &str = r#"{
  "id": "ms-01",
  "series": [
    {"id": "flair", "path": "flair/"},
    {
      "id": "t1",
      "path": "t1/"
    }
  ],
  "note": "a \"quoted\" [bracket",
  "tasks": [{"id": "t", "key_images": [{"series": "x", "slice": 3}]}]
}"#;

    #[test]
    fn finds_nested_fields_by_line() {
        let cases = [
            ("id", Some(2)),
            ("series", Some(3)),
            ("series[0].path", Some(4)),
            ("series[1]", Some(5)),
            ("series[1].path", Some(7)),
            ("tasks[0].key_images[0].slice", Some(11)),
            ("series[2]", None),
            ("missing", None),
        ];
        for (field, expected) in cases {
            assert_eq!(line_of(TEXT, field), expected, "{field}");
        }
    }
}
