use goldy::gpu;

#[goldy::compute]
fn undeclared(xs: &mut [f32]) {
    xs[0] = missing;
}

#[goldy::compute]
fn similar_name(xs: &mut [f32]) {
    let value = 1.0;
    xs[0] = valeu;
}

#[goldy::compute]
fn out_of_scope(xs: &mut [f32]) {
    {
        let inner = 1.0;
    }
    xs[0] = inner;
}

#[goldy::compute]
fn unknown_constant(xs: &mut [f32]) {
    xs[0] = f32::HUGE;
}

#[goldy::compute]
fn self_value(xs: &mut [f32]) {
    xs[0] = self.x;
}
