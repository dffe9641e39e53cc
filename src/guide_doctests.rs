//! The guide's chapters (docs/, an mdBook), one item each, so that `cargo test --doc`
//! compiles and runs every Rust snippet in them. A snippet that needs a location the
//! machine lacks says so and returns; `rust,ignore` marks the blocks mdBook fills from
//! files (`{{#include}}`), which build and run as examples instead.

macro_rules! chapters {
    ($($name:ident => $path:literal),* $(,)?) => {
        $(
            #[doc = include_str!($path)]
            pub struct $name;
        )*
    };
}

chapters! {
    Introduction => "../docs/introduction.md",
    GettingStarted => "../docs/guide/getting-started.md",
    Concepts => "../docs/guide/concepts.md",
    Buffers => "../docs/guide/buffers.md",
    Queues => "../docs/guide/queues.md",
    BringYourOwn => "../docs/guide/bring-your-own.md",
    Regions => "../docs/guide/regions.md",
    Resources => "../docs/guide/resources.md",
    Codelets => "../docs/guide/codelets.md",
    Backends => "../docs/guide/backends.md",
    Host => "../docs/guide/tech/host.md",
    OpenMp => "../docs/guide/tech/openmp.md",
    OpenCl => "../docs/guide/tech/opencl.md",
    Sycl => "../docs/guide/tech/sycl.md",
    WebGpu => "../docs/guide/tech/webgpu.md",
    Cuda => "../docs/guide/tech/cuda.md",
    Hip => "../docs/guide/tech/hip.md",
    Python => "../docs/guide/python.md",
    CAndCpp => "../docs/c-and-cpp.md",
    Porting => "../docs/guide/porting.md",
    Mpi => "../docs/guide/mpi.md",
    Examples => "../docs/guide/examples.md",
    Bench => "../docs/guide/bench.md",
    Tracing => "../docs/guide/tracing.md",
    Troubleshooting => "../docs/guide/troubleshooting.md",
    Architecture => "../docs/guide/architecture.md",
}
