//! all-MiniLM-L6-v2 (a 6-layer, 384-wide BERT) on the CPU with candle, loaded from the files of
//! [`crate::weights`].
//!
//! Two readings of one forward pass: the contextual token embeddings BERTScore matches, and the
//! sentence embedding sentence-transformers makes of them (mean over the real tokens, then L2
//! normalisation). The shipped `tokenizer.json` pads every input to 128 tokens and truncates at
//! 128; that is switched off here (PLATFORM.md's trap): no text is padded at all, each attends
//! over its own tokens and the mean is over them.

use crate::bert::{BertEncoder, Config, Scratch};
use crate::{Error, Result};
use candle_core::{DType, Device};
use candle_nn::VarBuilder;
use rayon::prelude::*;
use sha2::{Digest, Sha256};
use std::path::Path;
use tokenizers::{Tokenizer, TruncationParams};

/// sentence-transformers' `max_seq_length` for this model (`sentence_bert_config.json`): a
/// sentence embedding reads at most this many tokens, `[CLS]` and `[SEP]` included.
pub const SENTENCE_MAX_TOKENS: usize = 256;

/// The model's position limit, which `bert_score` truncates at (`model_max_length`).
pub const TOKEN_MAX_TOKENS: usize = 512;

const SEP_TOKEN: u32 = 102;

pub struct MiniLm {
    model: BertEncoder,
    tokenizer: Tokenizer,
    hidden: usize,
    identity: String,
}

/// One text's contextual token embeddings (`[CLS]` first, `[SEP]` last), as the model gives
/// them: not normalised.
#[derive(Debug, Clone, PartialEq)]
pub struct TokenEmbeddings {
    pub hidden: usize,
    /// `tokens × hidden`, row-major.
    pub values: Vec<f32>,
}

impl TokenEmbeddings {
    pub fn tokens(&self) -> usize {
        self.values.len() / self.hidden
    }

    pub fn row(&self, token: usize) -> &[f32] {
        &self.values[token * self.hidden..(token + 1) * self.hidden]
    }

    /// sentence-transformers' embedding: the mean over the first [`SENTENCE_MAX_TOKENS`] tokens
    /// (as if truncated there, `[SEP]` kept last), L2-normalised.
    pub fn sentence(&self) -> Option<Vec<f32>> {
        (self.tokens() <= SENTENCE_MAX_TOKENS).then(|| {
            let mut mean = vec![0f32; self.hidden];
            for token in 0..self.tokens() {
                for (m, v) in mean.iter_mut().zip(self.row(token)) {
                    *m += v;
                }
            }
            let n = self.tokens() as f32;
            mean.iter_mut().for_each(|m| *m /= n);
            normalised(mean)
        })
    }
}

/// The vector divided by its Euclidean norm (sentence-transformers' `Normalize`, whose eps
/// 1e-12 keeps a zero vector zero).
pub fn normalised(mut v: Vec<f32>) -> Vec<f32> {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-12);
    v.iter_mut().for_each(|x| *x /= norm);
    v
}

impl MiniLm {
    /// Loads the model from a folder checked by [`crate::weights::check`].
    pub fn load(dir: &Path) -> Result<MiniLm> {
        crate::weights::check(dir)?;
        let config_path = dir.join("config.json");
        let config_text = std::fs::read_to_string(&config_path).map_err(|source| Error::Io {
            path: config_path.clone(),
            source,
        })?;
        let config: Config =
            serde_json::from_str(&config_text).map_err(|e| Error::BadModelFile {
                path: config_path.clone(),
                what: format!("not a BERT configuration: {e}"),
            })?;
        let weights_path = dir.join("model.safetensors");
        let weights = std::fs::read(&weights_path).map_err(|source| Error::Io {
            path: weights_path.clone(),
            source,
        })?;
        // The cache key: a different file under the same name gives different embeddings.
        let digest: String = Sha256::digest(&weights)
            .iter()
            .take(8)
            .map(|b| format!("{b:02x}"))
            .collect();
        let vb = VarBuilder::from_buffered_safetensors(weights, DType::F32, &Device::Cpu).map_err(
            |e| Error::BadModelFile {
                path: weights_path.clone(),
                what: format!("not a safetensors file: {e}"),
            },
        )?;
        let model = BertEncoder::load(vb, &config).map_err(|e| Error::BadModelFile {
            path: weights_path.clone(),
            what: format!("does not hold the BERT weights config.json describes: {e}"),
        })?;
        let tokenizer_path = dir.join("tokenizer.json");
        let mut tokenizer =
            Tokenizer::from_file(&tokenizer_path).map_err(|e| Error::BadModelFile {
                path: tokenizer_path.clone(),
                what: e.to_string(),
            })?;
        tokenizer.with_padding(None);
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: TOKEN_MAX_TOKENS,
                ..TruncationParams::default()
            }))
            .map_err(|e| Error::BadModelFile {
                path: tokenizer_path.clone(),
                what: e.to_string(),
            })?;
        Ok(MiniLm {
            model,
            tokenizer,
            hidden: config.hidden_size,
            identity: format!("all-MiniLM-L6-v2@{digest}"),
        })
    }

    /// Names the model and its weights (`all-MiniLM-L6-v2@` and the first 16 hex digits of the
    /// weights' SHA-256): the key cached embeddings and metrics are stored under.
    pub fn identity(&self) -> &str {
        &self.identity
    }

    /// Token ids with `[CLS]` and `[SEP]`, truncated at [`TOKEN_MAX_TOKENS`]. Leading and
    /// trailing whitespace is stripped first, as both Python packages do.
    pub fn tokenize(&self, text: &str) -> Result<Vec<u32>> {
        let encoding = self
            .tokenizer
            .encode(text.trim(), true)
            .map_err(|e| Error::Tokenize(e.to_string()))?;
        Ok(encoding.get_ids().to_vec())
    }

    /// The contextual token embeddings of each text, in the order given.
    pub fn token_embeddings(&self, texts: &[&str]) -> Result<Vec<TokenEmbeddings>> {
        let ids = texts
            .par_iter()
            .map(|t| self.tokenize(t))
            .collect::<Result<Vec<_>>>()?;
        self.embed_ids(&ids)
    }

    /// sentence-transformers' embeddings of each text (unit vectors), in the order given.
    pub fn sentence_embeddings(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>> {
        let ids = texts
            .par_iter()
            .map(|t| self.tokenize(t).map(truncate_for_sentence))
            .collect::<Result<Vec<_>>>()?;
        // Pooled as each group finishes, so that the token embeddings of every text are never
        // held at once (2,000 texts of ~120 tokens: 370 MB).
        self.embed_ids_then(&ids, |t| {
            t.sentence().expect("truncated to SENTENCE_MAX_TOKENS")
        })
    }

    /// Runs the model over token ids, the texts split into groups of about equal token counts
    /// that the cores take in turn (`bert.rs` says why a group runs on one core).
    pub fn embed_ids(&self, ids: &[Vec<u32>]) -> Result<Vec<TokenEmbeddings>> {
        self.embed_ids_then(ids, |embeddings| embeddings)
    }

    /// [`MiniLm::embed_ids`], each text's embeddings handed to `each` as its group finishes.
    fn embed_ids_then<T: Send>(
        &self,
        ids: &[Vec<u32>],
        each: impl Fn(TokenEmbeddings) -> T + Sync,
    ) -> Result<Vec<T>> {
        let groups = groups_of_tokens(ids, rayon::current_num_threads());
        let done = groups
            .par_iter()
            .map_init(Scratch::default, |scratch, group| {
                let texts: Vec<&[u32]> = group.iter().map(|v| v.as_slice()).collect();
                let states = self
                    .model
                    .forward(&texts, scratch)
                    .map_err(Error::model("running the model"))?;
                Ok(states
                    .into_iter()
                    .map(|values| {
                        each(TokenEmbeddings {
                            hidden: self.hidden,
                            values,
                        })
                    })
                    .collect::<Vec<T>>())
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(done.into_iter().flatten().collect())
    }
}

/// Most tokens one core takes at a time: large enough that the products run at full speed,
/// small enough that a long call keeps both cores busy to its end.
const GROUP_TOKENS: usize = 1024;

/// `ids` in order, cut into consecutive groups of at most [`GROUP_TOKENS`] tokens (a longer text
/// alone), and into at least `cores` groups when there are that many texts.
fn groups_of_tokens(ids: &[Vec<u32>], cores: usize) -> Vec<&[Vec<u32>]> {
    let total: usize = ids.iter().map(Vec::len).sum();
    let target = total.div_ceil(cores.max(1)).clamp(1, GROUP_TOKENS);
    let mut groups = Vec::new();
    let (mut start, mut tokens) = (0, 0);
    for (i, text) in ids.iter().enumerate() {
        if i > start && tokens + text.len() > target {
            groups.push(&ids[start..i]);
            (start, tokens) = (i, 0);
        }
        tokens += text.len();
    }
    if start < ids.len() {
        groups.push(&ids[start..]);
    }
    groups
}

/// The ids sentence-transformers would read: at most [`SENTENCE_MAX_TOKENS`], `[SEP]` last.
pub fn truncate_for_sentence(mut ids: Vec<u32>) -> Vec<u32> {
    if ids.len() > SENTENCE_MAX_TOKENS {
        ids.truncate(SENTENCE_MAX_TOKENS - 1);
        ids.push(SEP_TOKEN);
    }
    ids
}
