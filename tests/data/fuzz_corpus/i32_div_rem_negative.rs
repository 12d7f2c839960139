// issue 13, case 3: i32 `%` with a negative operand returned the wrong sign on NVIDIA's
// Vulkan driver (lavapipe was right). Rust: `/` truncates toward zero, `%` takes the sign
// of the dividend, `x % 0` and `x / 0` give 0 with checks off, `i32::MIN / -1` is MIN,
// `i32::MIN % -1` is 0. Shifts take the amount modulo 32, negative amounts as u32.
use goldy::gpu;

#[goldy::compute(workgroup_size = [64, 1, 1])]
fn k(a: &[i32], b: &[i32], q: &mut [i32], r: &mut [i32], shl: &mut [i32], shr: &mut [i32]) {
    let i = gpu::global_id().x;
    if i < a.len() {
        q[i] = a[i] / b[i];
        r[i] = a[i] % b[i];
        shl[i] = a[i] << b[i];
        shr[i] = a[i] >> b[i];
    }
}
