use goldy::gpu;

#[goldy::compute]
fn break_outside(xs: &mut [f32]) {
    break;
}

#[goldy::compute]
fn continue_in_if(xs: &mut [f32]) {
    if xs.len() > 0 {
        continue;
    }
}
