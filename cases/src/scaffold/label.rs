//! What a series probably is (T1, FLAIR, DWI …), guessed from the header attributes a scanner
//! writes. A guess only: the bundle marks it as one and a curator confirms it.

/// The labels a guess can give; the names readers use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Label {
    T1,
    T1Contrast,
    T2,
    Flair,
    Dwi,
    Adc,
    Swi,
    Ct,
}

impl Label {
    /// As a reader writes it, and as `case.json`'s `series[].label` holds it.
    pub fn name(self) -> &'static str {
        match self {
            Label::T1 => "T1",
            Label::T1Contrast => "T1+C",
            Label::T2 => "T2",
            Label::Flair => "FLAIR",
            Label::Dwi => "DWI",
            Label::Adc => "ADC",
            Label::Swi => "SWI",
            Label::Ct => "CT",
        }
    }

    /// The series id it suggests (ids allow no `+`).
    pub fn id(self) -> &'static str {
        match self {
            Label::T1 => "t1",
            Label::T1Contrast => "t1c",
            Label::T2 => "t2",
            Label::Flair => "flair",
            Label::Dwi => "dwi",
            Label::Adc => "adc",
            Label::Swi => "swi",
            Label::Ct => "ct",
        }
    }
}

/// The attributes a guess reads, from a DICOM header or a BIDS JSON sidecar. Times in ms.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Acquisition {
    pub modality: Option<String>,
    /// SeriesDescription (or ProtocolName); read for the guess, never written anywhere.
    pub description: String,
    pub image_type: Vec<String>,
    pub scanning_sequence: Option<String>,
    pub inversion_time_ms: Option<f64>,
    pub echo_time_ms: Option<f64>,
    pub repetition_time_ms: Option<f64>,
    pub diffusion_b_value: Option<f64>,
    /// ContrastBolusAgent is present.
    pub contrast_agent: bool,
}

/// A label and the attribute that decided it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Guess {
    pub label: Label,
    pub basis: &'static str,
}

/// Description words that mean contrast was given.
const CONTRAST_WORDS: [&str; 6] = ["+c", "+ c", "gad", "gd", "post", "contrast"];

/// The label the attributes point to, or `None` when nothing is telling.
pub fn guess(acq: &Acquisition) -> Option<Guess> {
    let description = acq.description.to_ascii_lowercase();
    let has = |words: &[&str]| words.iter().any(|w| description.contains(w));
    let image_type = |value: &str| acq.image_type.iter().any(|t| t.eq_ignore_ascii_case(value));
    let found = |label, basis| Some(Guess { label, basis });
    if acq.modality.as_deref() == Some("CT") {
        return found(Label::Ct, "Modality");
    }
    if image_type("ADC") {
        return found(Label::Adc, "ImageType");
    }
    if has(&["adc", "apparent diffusion"]) {
        return found(Label::Adc, "SeriesDescription");
    }
    if image_type("TRACE") || image_type("DIFFUSION") {
        return found(Label::Dwi, "ImageType");
    }
    if acq.diffusion_b_value.is_some_and(|b| b > 0.0) {
        return found(Label::Dwi, "DiffusionBValue");
    }
    if has(&["dwi", "diff", "trace"]) {
        return found(Label::Dwi, "SeriesDescription");
    }
    if has(&["swi", "swan", "suscept"]) {
        return found(Label::Swi, "SeriesDescription");
    }
    if has(&["flair", "dark fluid", "dark-fluid", "tirm"]) {
        return found(Label::Flair, "SeriesDescription");
    }
    let contrast = acq.contrast_agent || has(&CONTRAST_WORDS);
    let t1 = if contrast {
        Label::T1Contrast
    } else {
        Label::T1
    };
    if has(&[
        "t1", "mprage", "mp-rage", "mp rage", "spgr", "bravo", "tfl3d",
    ]) {
        return found(t1, "SeriesDescription");
    }
    if has(&["t2"]) {
        return found(Label::T2, "SeriesDescription");
    }
    // Without a telling description, the timing: a long inversion nulls fluid (FLAIR); short
    // TR and TE weight T1; long TR and TE weight T2.
    let (tr, te) = (acq.repetition_time_ms, acq.echo_time_ms);
    if acq.inversion_time_ms.is_some_and(|ti| ti >= 1500.0) && te.is_some_and(|te| te >= 60.0) {
        return found(Label::Flair, "InversionTime");
    }
    match (tr, te) {
        (Some(tr), Some(te)) if tr < 1000.0 && te < 30.0 => found(t1, "RepetitionTime/EchoTime"),
        (Some(tr), Some(te)) if tr >= 2000.0 && te >= 60.0 => {
            found(Label::T2, "RepetitionTime/EchoTime")
        }
        _ => None,
    }
}

/// The label a BIDS file name's suffix and entities give (`sub-01_ce-gad_T1w.nii.gz`).
pub fn from_bids_name(stem: &str) -> Option<Guess> {
    let suffix = stem.rsplit('_').next()?;
    let contrast = stem.split('_').any(|entity| entity.starts_with("ce-"));
    let label = match suffix {
        "T1w" if contrast => Label::T1Contrast,
        "T1w" => Label::T1,
        "T2w" => Label::T2,
        "FLAIR" => Label::Flair,
        "dwi" => Label::Dwi,
        "swi" | "SWImagandphase" => Label::Swi,
        _ => return None,
    };
    Some(Guess {
        label,
        basis: "BIDS suffix",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(acq: Acquisition, expected: Option<(Label, &str)>) {
        assert_eq!(guess(&acq).map(|g| (g.label, g.basis)), expected, "{acq:?}");
    }

    fn described(description: &str) -> Acquisition {
        Acquisition {
            modality: Some("MR".into()),
            description: description.into(),
            ..Acquisition::default()
        }
    }

    #[test]
    fn descriptions_scanners_write_give_the_reader_s_label() {
        for (description, label) in [
            ("AX FLAIR", Label::Flair),
            ("t2_tirm_tra_dark-fluid", Label::Flair),
            ("Ax T1 SE", Label::T1),
            ("t1_mprage_sag_p2_iso", Label::T1),
            ("AX T1 POST GAD", Label::T1Contrast),
            ("T2 TSE AXIAL", Label::T2),
            ("ep2d_diff_3scan_trace_p2", Label::Dwi),
            ("ep2d_diff_3scan_trace_p2_ADC", Label::Adc),
            ("SWI_Images", Label::Swi),
        ] {
            check(described(description), Some((label, "SeriesDescription")));
        }
    }

    #[test]
    fn acquisition_attributes_decide_when_the_description_says_nothing() {
        check(
            Acquisition {
                image_type: vec!["DERIVED".into(), "PRIMARY".into(), "ADC".into()],
                ..described("series 5")
            },
            Some((Label::Adc, "ImageType")),
        );
        check(
            Acquisition {
                diffusion_b_value: Some(1000.0),
                ..described("series 6")
            },
            Some((Label::Dwi, "DiffusionBValue")),
        );
        check(
            Acquisition {
                inversion_time_ms: Some(2500.0),
                echo_time_ms: Some(120.0),
                repetition_time_ms: Some(9000.0),
                ..described("")
            },
            Some((Label::Flair, "InversionTime")),
        );
        check(
            Acquisition {
                echo_time_ms: Some(12.0),
                repetition_time_ms: Some(500.0),
                contrast_agent: true,
                ..described("")
            },
            Some((Label::T1Contrast, "RepetitionTime/EchoTime")),
        );
        check(
            Acquisition {
                modality: Some("CT".into()),
                ..Acquisition::default()
            },
            Some((Label::Ct, "Modality")),
        );
        check(described("localiser"), None);
    }

    #[test]
    fn bids_suffixes_and_the_contrast_entity_give_the_label() {
        let label = |stem| from_bids_name(stem).map(|g| g.label);
        assert_eq!(label("sub-01_ses-1_T1w"), Some(Label::T1));
        assert_eq!(label("sub-01_ce-gadolinium_T1w"), Some(Label::T1Contrast));
        assert_eq!(label("sub-01_FLAIR"), Some(Label::Flair));
        assert_eq!(label("sub-01_acq-b1000_dwi"), Some(Label::Dwi));
        assert_eq!(label("sub-01_bold"), None);
    }
}
