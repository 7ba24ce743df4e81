//! The BERT encoder all-MiniLM-L6-v2 is: embeddings, then self-attention layers, no pooler.
//!
//! The arithmetic is Hugging Face transformers' `modeling_bert.py` (as candle-transformers 0.11.1
//! `models/bert.rs` ports it, Copyright the candle authors, MIT OR Apache-2.0); the weights are
//! read with candle, the forward pass is plain buffers, gemm's matrix products and the kernels of
//! `kernels.rs`. Profiled against candle's tensors (docs/performance.md), what made this faster
//! than sentence-transformers' torch on the same two cores:
//! - **No padding.** The texts of a call are laid end to end, one row per real token: the linear
//!   layers are per token, and each text's attention runs over its own tokens, so no padded row
//!   is computed and no mask is needed (a masked key's weight is exactly 0 in f32 either way).
//! - **One core per group of texts, through all layers.** The products of a group run
//!   single-threaded, so the cores never wait on each other or share a cache line.
//! - **Attention a row at a time.** Each query's scores, softmax and weighted sum of values are
//!   made in one pass while the row is in L1 (`kernels::attention`), rather than as a dozen small
//!   matrix products per text and layer, each packing its operands.
//! - **Rows still in cache.** The feed-forward block runs [`ROWS_PER_BLOCK`] tokens at a time:
//!   the 1,536-wide intermediate rows are made, activated and consumed while they are in L2, and
//!   bias, residual and layer norm are applied to a product's rows right after it writes them.
//! - **Buffers reused.** A [`Scratch`] holds every intermediate; nothing is allocated or zeroed per
//!   layer.

use crate::kernels::{self, AttentionScratch, Norm};
use candle_core::Result;
use candle_nn::VarBuilder;
use serde::Deserialize;

/// Tokens of the feed-forward block at a time: their intermediate rows (× 1,536 × 4 bytes ≈
/// 786 KB) stay in the core's 2 MB L2 between the two products.
const ROWS_PER_BLOCK: usize = 128;

/// The fields of Hugging Face's `config.json` the encoder needs; the rest are ignored.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Config {
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub intermediate_size: usize,
    pub hidden_act: HiddenAct,
    pub max_position_embeddings: usize,
    pub type_vocab_size: usize,
    pub layer_norm_eps: f64,
}

/// BERT's `gelu` is the exact (erf) form; other activations are refused when the config is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum HiddenAct {
    Gelu,
}

/// A linear layer's weight transposed to (inputs, outputs), row-major, the layout gemm reads
/// without a stride, and its bias.
struct Linear {
    weight: Vec<f32>,
    bias: Vec<f32>,
}

impl Linear {
    /// Loads one or more layers over the same input side by side, as one wider layer: the
    /// query, key and value projections become one product.
    fn load(input: usize, output: usize, vbs: &[VarBuilder]) -> Result<Self> {
        let parts = vbs
            .iter()
            .map(|vb| {
                Ok((
                    vb.get((output, input), "weight")?.to_vec2::<f32>()?,
                    vb.get(output, "bias")?.to_vec1::<f32>()?,
                ))
            })
            .collect::<Result<Vec<_>>>()?;
        let width = output * parts.len();
        let mut weight = vec![0f32; input * width];
        for (p, (rows, _)) in parts.iter().enumerate() {
            for (o, row) in rows.iter().enumerate() {
                for (i, w) in row.iter().enumerate() {
                    weight[i * width + p * output + o] = *w;
                }
            }
        }
        Ok(Linear {
            weight,
            bias: parts.into_iter().flat_map(|(_, bias)| bias).collect(),
        })
    }

    fn outputs(&self) -> usize {
        self.bias.len()
    }

    /// `out` (rows, outputs) = `input` (rows, inputs) · weight, without the bias.
    fn product(&self, input: &[f32], out: &mut [f32]) {
        let inputs = self.weight.len() / self.outputs();
        product(out, input, &self.weight, inputs, self.outputs());
    }
}

/// `out` (rows, columns) = `lhs` (rows, inner) · `rhs` (inner, columns), all row-major and dense,
/// `out` overwritten; on the calling core.
fn product(out: &mut [f32], lhs: &[f32], rhs: &[f32], inner: usize, columns: usize) {
    let rows = lhs.len() / inner;
    assert!(
        lhs.len() == rows * inner && rhs.len() == inner * columns && out.len() == rows * columns,
        "a product's shapes disagree: {} · {} into {} with inner {inner}, columns {columns}",
        lhs.len(),
        rhs.len(),
        out.len()
    );
    // SAFETY: the shapes match the buffers' lengths (checked above), and `out` is borrowed
    // mutably, so it overlaps neither input.
    unsafe {
        gemm::gemm(
            rows,
            columns,
            inner,
            out.as_mut_ptr(),
            1,
            columns as isize,
            false,
            lhs.as_ptr(),
            1,
            inner as isize,
            rhs.as_ptr(),
            1,
            columns as isize,
            0.0,
            1.0,
            false,
            false,
            false,
            gemm::Parallelism::None,
        )
    }
}

fn norm(vb: VarBuilder, width: usize, eps: f64) -> Result<Norm> {
    Ok(Norm {
        gamma: vb.get(width, "weight")?.to_vec1()?,
        beta: vb.get(width, "bias")?.to_vec1()?,
        eps: eps as f32,
    })
}

struct Layer {
    /// Query, key and value projections side by side: (hidden, 3 · hidden).
    query_key_value: Linear,
    attention_out: Linear,
    attention_norm: Norm,
    intermediate: Linear,
    out: Linear,
    out_norm: Norm,
}

impl Layer {
    fn load(vb: VarBuilder, c: &Config) -> Result<Self> {
        let h = c.hidden_size;
        let attention = vb.pp("attention");
        let own = attention.pp("self");
        Ok(Layer {
            query_key_value: Linear::load(
                h,
                h,
                &[own.pp("query"), own.pp("key"), own.pp("value")],
            )?,
            attention_out: Linear::load(h, h, &[attention.pp("output").pp("dense")])?,
            attention_norm: norm(attention.pp("output").pp("LayerNorm"), h, c.layer_norm_eps)?,
            intermediate: Linear::load(
                h,
                c.intermediate_size,
                &[vb.pp("intermediate").pp("dense")],
            )?,
            out: Linear::load(c.intermediate_size, h, &[vb.pp("output").pp("dense")])?,
            out_norm: norm(vb.pp("output").pp("LayerNorm"), h, c.layer_norm_eps)?,
        })
    }
}

/// Every intermediate of a forward pass, kept between calls on one core so that nothing is
/// allocated per layer; [`BertEncoder::forward`] sizes it.
#[derive(Default)]
pub struct Scratch {
    /// (tokens, 3 · hidden): each token's query, key and value.
    query_key_value: Vec<f32>,
    /// (tokens, hidden): the heads' outputs side by side.
    context: Vec<f32>,
    attention: AttentionScratch,
    /// (ROWS_PER_BLOCK, hidden) and (ROWS_PER_BLOCK, intermediate).
    attended: Vec<f32>,
    intermediate: Vec<f32>,
}

fn sized(buffer: &mut Vec<f32>, len: usize) -> &mut [f32] {
    if buffer.len() < len {
        buffer.resize(len, 0.0);
    }
    &mut buffer[..len]
}

pub struct BertEncoder {
    hidden: usize,
    heads: usize,
    max_positions: usize,
    words: Vec<f32>,
    positions: Vec<f32>,
    /// The embedding of token type 0: every input here is a single segment.
    token_type: Vec<f32>,
    embedding_norm: Norm,
    layers: Vec<Layer>,
}

impl BertEncoder {
    /// Loads the weights under `embeddings.` and `encoder.layer.N.` (sentence-transformers'
    /// export has no `bert.` prefix).
    pub fn load(vb: VarBuilder, c: &Config) -> Result<Self> {
        let h = c.hidden_size;
        if c.num_attention_heads == 0 || !h.is_multiple_of(c.num_attention_heads) {
            candle_core::bail!(
                "hidden_size {h} is not a multiple of num_attention_heads {}",
                c.num_attention_heads
            );
        }
        let e = vb.pp("embeddings");
        let table = |name: &str, rows: usize| -> Result<Vec<f32>> {
            e.pp(name)
                .get((rows, h), "weight")?
                .flatten_all()?
                .to_vec1()
        };
        Ok(BertEncoder {
            hidden: h,
            heads: c.num_attention_heads,
            max_positions: c.max_position_embeddings,
            words: table("word_embeddings", c.vocab_size)?,
            positions: table("position_embeddings", c.max_position_embeddings)?,
            token_type: table("token_type_embeddings", c.type_vocab_size)?[..h].to_vec(),
            embedding_norm: norm(e.pp("LayerNorm"), h, c.layer_norm_eps)?,
            layers: (0..c.num_hidden_layers)
                .map(|i| Layer::load(vb.pp("encoder").pp(format!("layer.{i}")), c))
                .collect::<Result<_>>()?,
        })
    }

    /// The last hidden state of each text, (its tokens, hidden) row-major, on the calling core.
    /// Token ids must come from the model's tokenizer: at most `max_position_embeddings` of them,
    /// each below `vocab_size`.
    pub fn forward(&self, texts: &[&[u32]], scratch: &mut Scratch) -> Result<Vec<Vec<f32>>> {
        let h = self.hidden;
        let tokens: usize = texts.iter().map(|t| t.len()).sum();
        let longest = texts.iter().map(|t| t.len()).max().unwrap_or(0);
        if longest > self.max_positions {
            candle_core::bail!(
                "a text of {longest} tokens: the model reads at most {}",
                self.max_positions
            );
        }
        let vocabulary = self.words.len() / h;
        let mut states = Vec::with_capacity(tokens * h);
        for text in texts {
            for (position, &id) in text.iter().enumerate() {
                let id = id as usize;
                if id >= vocabulary {
                    candle_core::bail!("token id {id} is not in the model's {vocabulary} words");
                }
                let word = &self.words[id * h..(id + 1) * h];
                let place = &self.positions[position * h..(position + 1) * h];
                states.extend(
                    word.iter()
                        .zip(place)
                        .zip(&self.token_type)
                        .map(|((w, p), t)| w + p + t),
                );
            }
        }
        kernels::layer_norm(&mut states, &self.embedding_norm);
        for layer in &self.layers {
            self.attention(layer, texts, &states, scratch);
            self.feed_forward(layer, &mut states, scratch);
        }
        let mut start = 0;
        Ok(texts
            .iter()
            .map(|text| {
                let end = start + text.len() * h;
                let state = states[start..end].to_vec();
                start = end;
                state
            })
            .collect())
    }

    /// Self-attention of each text over its own tokens, every head: the heads' outputs side by
    /// side in `scratch.context`.
    fn attention(&self, layer: &Layer, texts: &[&[u32]], states: &[f32], scratch: &mut Scratch) {
        let h = self.hidden;
        let tokens = states.len() / h;
        let qkv = sized(&mut scratch.query_key_value, tokens * 3 * h);
        layer.query_key_value.product(states, qkv);
        kernels::add_bias(qkv, &layer.query_key_value.bias);
        let context = sized(&mut scratch.context, tokens * h);
        let mut first = 0;
        for text in texts {
            let n = text.len();
            kernels::attention(
                &qkv[first * 3 * h..(first + n) * 3 * h],
                n,
                self.heads,
                &mut context[first * h..(first + n) * h],
                &mut scratch.attention,
            );
            first += n;
        }
    }

    /// Attention output, add and norm, then the feed-forward block, add and norm, a block of
    /// tokens at a time: `states` becomes the layer's output.
    fn feed_forward(&self, layer: &Layer, states: &mut [f32], scratch: &mut Scratch) {
        let h = self.hidden;
        let wide = layer.intermediate.outputs();
        let context = &scratch.context[..states.len()];
        let attended = sized(&mut scratch.attended, ROWS_PER_BLOCK * h);
        let intermediate = sized(&mut scratch.intermediate, ROWS_PER_BLOCK * wide);
        for (block, context) in states
            .chunks_mut(ROWS_PER_BLOCK * h)
            .zip(context.chunks(ROWS_PER_BLOCK * h))
        {
            let rows = block.len() / h;
            let attended = &mut attended[..rows * h];
            let intermediate = &mut intermediate[..rows * wide];
            layer.attention_out.product(context, attended);
            kernels::residual_then_norm(
                attended,
                &layer.attention_out.bias,
                block,
                &layer.attention_norm,
            );
            layer.intermediate.product(attended, intermediate);
            kernels::bias_then_gelu(intermediate, &layer.intermediate.bias);
            layer.out.product(intermediate, block);
            kernels::residual_then_norm(block, &layer.out.bias, attended, &layer.out_norm);
        }
    }
}
