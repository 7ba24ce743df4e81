//! The BERT encoder all-MiniLM-L6-v2 is: embeddings, then self-attention layers, no pooler.
//!
//! Adapted from candle-transformers 0.11.1 `models/bert.rs` (Copyright the candle authors, MIT OR
//! Apache-2.0), itself a port of Hugging Face transformers' `modeling_bert.py`. Only the encoder
//! is kept: candle-transformers carries every model candle supports and took longer to build
//! cold than the rest of this crate's dependencies together, for the 150 lines used here.

use crate::kernels::{BiasThenActivation, MaskedSoftmax};
use candle_core::{Module, Result, Tensor, D};
use candle_nn::{embedding, layer_norm, Embedding, LayerNorm, VarBuilder};
use serde::Deserialize;

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

struct Embeddings {
    words: Embedding,
    positions: Embedding,
    token_types: Embedding,
    norm: LayerNorm,
}

impl Embeddings {
    fn load(vb: VarBuilder, c: &Config) -> Result<Self> {
        Ok(Embeddings {
            words: embedding(c.vocab_size, c.hidden_size, vb.pp("word_embeddings"))?,
            positions: embedding(
                c.max_position_embeddings,
                c.hidden_size,
                vb.pp("position_embeddings"),
            )?,
            token_types: embedding(
                c.type_vocab_size,
                c.hidden_size,
                vb.pp("token_type_embeddings"),
            )?,
            norm: layer_norm(c.hidden_size, c.layer_norm_eps, vb.pp("LayerNorm"))?,
        })
    }

    fn forward(&self, ids: &Tensor, token_types: &Tensor) -> Result<Tensor> {
        let (_, length) = ids.dims2()?;
        let positions = Tensor::arange(0u32, length as u32, ids.device())?;
        let sum = (self.words.forward(ids)? + self.token_types.forward(token_types)?)?
            .broadcast_add(&self.positions.forward(&positions)?)?;
        self.norm.forward(&sum)
    }
}

struct Layer {
    query: Dense,
    key: Dense,
    value: Dense,
    attention_out: Dense,
    attention_norm: LayerNorm,
    intermediate: Dense,
    out: Dense,
    out_norm: LayerNorm,
    heads: usize,
    head_size: usize,
}

impl Layer {
    fn load(vb: VarBuilder, c: &Config) -> Result<Self> {
        let h = c.hidden_size;
        let attention = vb.pp("attention");
        Ok(Layer {
            query: Dense::load(h, h, false, attention.pp("self").pp("query"))?,
            key: Dense::load(h, h, false, attention.pp("self").pp("key"))?,
            value: Dense::load(h, h, false, attention.pp("self").pp("value"))?,
            attention_out: Dense::load(h, h, false, attention.pp("output").pp("dense"))?,
            attention_norm: layer_norm(
                h,
                c.layer_norm_eps,
                attention.pp("output").pp("LayerNorm"),
            )?,
            intermediate: Dense::load(
                h,
                c.intermediate_size,
                true,
                vb.pp("intermediate").pp("dense"),
            )?,
            out: Dense::load(c.intermediate_size, h, false, vb.pp("output").pp("dense"))?,
            out_norm: layer_norm(h, c.layer_norm_eps, vb.pp("output").pp("LayerNorm"))?,
            heads: c.num_attention_heads,
            head_size: h / c.num_attention_heads,
        })
    }

    /// (batch, tokens, hidden) → (batch, heads, tokens, head size).
    fn split_heads(&self, xs: &Tensor) -> Result<Tensor> {
        let (batch, tokens, _) = xs.dims3()?;
        xs.reshape((batch, tokens, self.heads, self.head_size))?
            .transpose(1, 2)?
            .contiguous()
    }

    /// `mask`: (texts, tokens), 0 for a real token and the most negative f32 for padding.
    fn forward(&self, xs: &Tensor, mask: &[f32]) -> Result<Tensor> {
        let q = self.split_heads(&self.query.forward(xs)?)?;
        let k = self.split_heads(&self.key.forward(xs)?)?;
        let v = self.split_heads(&self.value.forward(xs)?)?;
        let weights = q.matmul(&k.t()?)?;
        weights.inplace_op1(&MaskedSoftmax {
            scale: 1.0 / (self.head_size as f32).sqrt(),
            mask: mask.to_vec(),
            rows_per_text: self.heads * xs.dim(1)?,
        })?;
        let context = weights
            .matmul(&v)?
            .transpose(1, 2)?
            .contiguous()?
            .flatten_from(D::Minus2)?;
        let attended = self
            .attention_norm
            .forward(&(self.attention_out.forward(&context)? + xs)?)?;
        let inner = self.intermediate.forward(&attended)?;
        self.out_norm
            .forward(&(self.out.forward(&inner)? + &attended)?)
    }
}

/// A linear layer over every token of the batch as one matrix product, (texts · tokens, in) ×
/// (in, out) — candle's `Linear` on a 3-D input multiplies text by text, each product only a
/// text's tokens tall — with the bias (and GELU) added in place by one kernel.
struct Dense {
    weight: Tensor,
    bias: BiasThenActivation,
}

impl Dense {
    fn load(input: usize, output: usize, gelu: bool, vb: VarBuilder) -> Result<Self> {
        Ok(Dense {
            weight: vb.get((output, input), "weight")?,
            bias: BiasThenActivation {
                bias: vb.get(output, "bias")?.to_vec1::<f32>()?,
                gelu,
            },
        })
    }

    fn forward(&self, xs: &Tensor) -> Result<Tensor> {
        let (texts, tokens, width) = xs.dims3()?;
        let out = xs
            .reshape((texts * tokens, width))?
            .matmul(&self.weight.t()?)?;
        out.inplace_op1(&self.bias)?;
        out.reshape((texts, tokens, self.bias.bias.len()))
    }
}

pub struct BertEncoder {
    embeddings: Embeddings,
    layers: Vec<Layer>,
}

impl BertEncoder {
    /// Loads the weights under `embeddings.` and `encoder.layer.N.` (sentence-transformers'
    /// export has no `bert.` prefix).
    pub fn load(vb: VarBuilder, c: &Config) -> Result<Self> {
        Ok(BertEncoder {
            embeddings: Embeddings::load(vb.pp("embeddings"), c)?,
            layers: (0..c.num_hidden_layers)
                .map(|i| Layer::load(vb.pp("encoder").pp(format!("layer.{i}")), c))
                .collect::<Result<_>>()?,
        })
    }

    /// The last hidden state (batch, tokens, hidden) of `ids` (batch, tokens); `mask` is 1 for a
    /// real token and 0 for padding, which then receives no attention.
    pub fn forward(&self, ids: &Tensor, token_types: &Tensor, mask: &Tensor) -> Result<Tensor> {
        // Padding gets the most negative f32 before the softmax, as transformers does.
        let mask: Vec<f32> = mask
            .flatten_all()?
            .to_vec1::<u32>()?
            .into_iter()
            .map(|real| if real == 1 { 0.0 } else { f32::MIN })
            .collect();
        let mut xs = self.embeddings.forward(ids, token_types)?;
        for layer in &self.layers {
            xs = layer.forward(&xs, &mask)?;
        }
        Ok(xs)
    }
}
