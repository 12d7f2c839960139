//! A crate file that mixes host code with kernels, as a real project would.

use std::collections::HashMap;
use std::fmt;

use goldy::gpu;
use goldy::{Device, Kernel, Scheme};

const BLOCK: usize = 256;

#[derive(Debug, Clone)]
struct Config {
    name: String,
    sizes: Vec<usize>,
}

impl fmt::Display for Config {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({:?})", self.name, self.sizes)
    }
}

enum Mode {
    Fast,
    Exact { tolerance: f64 },
}

trait Runner {
    fn run(&self, data: &[f32]) -> Vec<f32>;
}

#[goldy::gpu]
struct Params {
    scale: f32,
    count: u32,
}

/// First good kernel.
#[goldy::compute(workgroup_size = [256, 1, 1])]
fn scale(p: gpu::Uniform<Params>, xs: &[f32], ys: &mut [f32]) {
    let i = gpu::global_id().x;
    if i < p.count {
        ys[i] = xs[i] * p.scale;
    }
}

fn host_helper(values: &[f32]) -> f32 {
    values.iter().copied().fold(0.0, f32::max)
}

/// The bad kernel: three separate mistakes.
#[goldy::compute]
fn broken(xs: &[f32], out: &mut [u32]) {
    let i = gpu::global_id().x;
    out[i] = xs[i];
    let total = xs.iter().sum::<f32>();
    out[0] = host_helper(xs) as u32;
}

/// Second good kernel.
#[goldy::compute(workgroup_size = [64, 1, 1])]
fn histogram(keys: &[u32], bins: &mut [u32]) {
    let i = gpu::global_id().x;
    if i < keys.len() {
        gpu::atomic_add(bins, keys[i] % bins.len(), 1);
    }
}

fn main() {
    let mut counts: HashMap<String, usize> = HashMap::new();
    counts.insert("runs".to_string(), BLOCK);
    let config = Config { name: "demo".into(), sizes: vec![1, 2, 3] };
    match Mode::Fast {
        Mode::Fast => println!("{config}"),
        Mode::Exact { tolerance } => println!("{tolerance}"),
    }
    let closure = |x: f32| x * 2.0;
    println!("{}", closure(host_helper(&[1.0, 2.0])));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helper_finds_max() {
        assert_eq!(host_helper(&[1.0, 3.0, 2.0]), 3.0);
    }
}
