//! Owned by the demo-generator work; replaced soon.
