use goldy::gpu;

#[goldy::compute]
fn iter_chain(xs: &mut [f32]) {
    let s = xs.iter().sum();
}

#[goldy::compute]
fn for_over_slice(xs: &mut [f32]) {
    for x in xs {
        x;
    }
}

#[goldy::compute]
fn enumerate(xs: &mut [f32]) {
    for (i, x) in xs.iter().enumerate() {}
}
