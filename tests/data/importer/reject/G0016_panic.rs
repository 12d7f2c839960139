use goldy::gpu;

#[goldy::compute]
fn unwrap(xs: &mut [f32]) {
    let v = xs[0].unwrap();
}

#[goldy::compute]
fn expect(xs: &mut [f32]) {
    let v = xs[0].expect("present");
}

#[goldy::compute]
fn panic_macro(xs: &mut [f32]) {
    panic!("no");
}

#[goldy::compute]
fn assert_macro(xs: &mut [f32]) {
    assert!(xs.len() > 0);
}

#[goldy::compute]
fn try_operator(xs: &mut [f32]) {
    let v = xs[0]?;
}
