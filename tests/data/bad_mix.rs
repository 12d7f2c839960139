use goldy::gpu;
fn helper(x: f32) -> f32 { x }
#[goldy::compute]
fn bad(x: &[f32], y: &mut [f32], a: f32, n: usize) {
    let i = gpu::global_id().x;
    let f = |z: f32| z * 2.0;
    println!("hi");
    match i { 0 => {}, _ => {} }
    let v: Vec<f32> = Vec::new();
    let b = x[i] + i;
    let u: u32 = 1.5;
    undefined_name += 1;
    let imm = 1.0;
    imm = 2.0;
    x[i] = 1.0;
    if i < 4 { let s = gpu::workgroup_array::<f32, 64>(); }
    let r = gpu::workgroup_sum::<100>(a, s);
    let z = 1.0 + gpu::workgroup_sum::<64>(a, s);
    let h = helper(1.0);
    let q = x[i].unwrap();
    let w = x.iter().map(|v| v).sum();
    let e = gpu::globl_id();
    let m = a.frobnicate();
    unsafe { }
    bad(x, y, a, n);
    let t: (u32, f32) = (1, 2.0);
    let d: f64 = 1.0;
}
#[goldy::compute]
fn good(y: &mut [f32]) { let i = gpu::global_id().x; y[i] = 1.0; }
#[goldy::compute]
fn generic<T>(#[tensor(shape=[n])] y: &mut [f32]) { }
#[goldy::compute]
async fn synt(y: &mut [f32]) { let x = ; }
