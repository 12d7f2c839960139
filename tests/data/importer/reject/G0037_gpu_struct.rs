use goldy::gpu;

#[goldy::gpu]
struct Wide {
    x: f64,
}

#[goldy::gpu]
struct Generic<T> {
    x: T,
}

#[goldy::gpu]
struct Tuple(f32, f32);

#[goldy::gpu]
struct Empty {}

#[goldy::gpu]
struct Nested {
    inner: Wide,
}

#[goldy::gpu]
fn not_a_struct() {}
