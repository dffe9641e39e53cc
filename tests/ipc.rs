//! Memory shared between processes on one node (issue 45, item 4), as two programs use
//! it: the first makes shared host memory and writes it, sends the handle's text to a
//! second process (this test binary started again), which opens it, checks the bytes in
//! place and writes its answer there; the first reads the answer without any copy
//! between them. Bad handles are errors naming what is wrong.

mod common;

use std::process::Command;

use locus::{IpcHandle, Location, Memory};

const N: usize = 1 << 20;

/// The second process: opens the handle in `LOCUS_IPC_HANDLE`, checks, answers.
fn child(text: &str) {
    let handle = IpcHandle::parse(text).expect("the handle's text parses");
    let shared = Memory::open_ipc(&handle).expect("the handle opens");
    assert_eq!(shared.len(), N);
    let mut got = vec![0u8; N];
    shared.read(0, &mut got).unwrap();
    assert!(
        got.iter().enumerate().all(|(i, &b)| b == (i % 251) as u8),
        "the maker's bytes"
    );
    shared.fill(0..N, &[7]).unwrap();
    println!("child answered");
}

#[test]
fn a_second_process_uses_shared_host_memory_in_place() {
    if let Ok(text) = std::env::var("LOCUS_IPC_HANDLE") {
        child(&text);
        return;
    }
    // The host, OpenMP's initial device (its memory is the host's), a SYCL device whose
    // kernels use plain host memory (system USM; Intel's CPU device), and OpenCL CPU
    // devices (a buffer over the shared pages).
    for at in [
        "host", "openmp:0", "sycl:0", "opencl:0", "opencl:1", "opencl:2",
    ]
    .into_iter()
    .filter_map(common::location)
    {
        let shared = Memory::new_shared(at, N).unwrap();
        assert_eq!(shared.location(), at);
        let bytes: Vec<u8> = (0..N).map(|i| (i % 251) as u8).collect();
        shared.write(0, &bytes).unwrap();
        let text = shared.ipc_handle().unwrap().to_string();
        let out = Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "a_second_process_uses_shared_host_memory_in_place",
                "--nocapture",
            ])
            .env("LOCUS_IPC_HANDLE", &text)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains("child answered"),
            "{at}: the second process failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut got = vec![0u8; N];
        shared.read(0, &mut got).unwrap();
        assert!(
            got.iter().all(|&b| b == 7),
            "{at}: the second process's answer is not in place"
        );
    }
}

/// A process that makes shared memory, prints its handle and ends without freeing it.
#[test]
fn a_handle_of_a_process_that_ended_is_an_error_saying_so() {
    if std::env::var("LOCUS_IPC_MAKE_AND_EXIT").is_ok() {
        let shared = Memory::new_shared(Location::Host, 4096).unwrap();
        println!("handle: {}", shared.ipc_handle().unwrap());
        std::mem::forget(shared);
        std::process::exit(0); // no drop: the name stays, its process is gone
    }
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "a_handle_of_a_process_that_ended_is_an_error_saying_so",
            "--nocapture",
        ])
        .env("LOCUS_IPC_MAKE_AND_EXIT", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let text = stdout
        .lines()
        .find_map(|l| l.strip_prefix("handle: "))
        .unwrap_or_else(|| panic!("no handle printed: {stdout}"));
    let handle = IpcHandle::parse(text).unwrap();
    let e = Memory::open_ipc(&handle).unwrap_err().to_string();
    assert!(e.contains("has ended") && e.contains(&handle.name), "{e}");
    // Tidy up what the ended process left.
    let _ = std::fs::remove_file(format!("/dev/shm{}", handle.name));
}

#[test]
fn bad_handles_and_unshared_memory_are_clear_errors() {
    // Memory not made shareable.
    let plain = Memory::new(Location::Host, 64).unwrap();
    let e = plain.ipc_handle().unwrap_err().to_string();
    assert!(
        e.contains("host") && e.contains("Memory::new_shared"),
        "{e}"
    );
    // Text that is no handle.
    let e = IpcHandle::parse("hello").unwrap_err().to_string();
    assert!(e.contains("not a locus IPC handle"), "{e}");
    // A handle of another node.
    let shared = Memory::new_shared(Location::Host, 64).unwrap();
    let mut elsewhere = shared.ipc_handle().unwrap();
    elsewhere.node = "some-other-node".into();
    let e = Memory::open_ipc(&elsewhere).unwrap_err().to_string();
    assert!(
        e.contains("some-other-node") && e.contains("does not cross nodes"),
        "{e}"
    );
    // A handle of memory its maker freed.
    let handle = shared.ipc_handle().unwrap();
    assert_eq!(IpcHandle::parse(&handle.to_string()).unwrap(), handle);
    drop(shared);
    let e = Memory::open_ipc(&handle).unwrap_err().to_string();
    assert!(e.contains("freed it or ended"), "{e}");
    // A location whose memory is not host memory (WebGPU's buffers are the runtime's).
    if let Some(webgpu) = common::location("webgpu:0") {
        let e = Memory::new_shared(webgpu, 64).unwrap_err().to_string();
        assert!(
            e.contains("webgpu:0 does not") && e.contains("Memory::new_shared(Location::Host"),
            "{e}"
        );
    }
}
