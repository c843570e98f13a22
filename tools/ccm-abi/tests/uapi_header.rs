// SPDX-License-Identifier: GPL-2.0

//! Checks `include/uapi/linux/cxl_ccm.h` against `drivers/cxl_ccm/{abi,uapi}.rs`.
//!
//! A generated C program includes the header and prints, for every user-visible structure, its
//! size, alignment and each field's offset and size, the value of every constant and ioctl number,
//! and the header's CRC32C of a few test vectors. The test compiles it with the C compiler (`$CC`,
//! else `cc`), with `-Wpadded -Werror` so that implicit padding in the header is an error of its
//! own, runs it, and compares its output with the same table rendered from the Rust types.

use std::path::{Path, PathBuf};
use std::process::Command;

use ccm_abi::layout::{self, compare};

fn uapi_include_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../include/uapi")
}

fn header_path() -> PathBuf {
    uapi_include_dir().join("linux/cxl_ccm.h")
}

/// Compiles `source` with the header's include directory and runs it; returns its standard
/// output, or the compiler's diagnostics if it does not compile.
fn try_compile_and_run(name: &str, source: &str) -> Result<String, String> {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ccm-abi");
    std::fs::create_dir_all(&dir).expect("create the scratch directory");
    let src = dir.join(format!("{name}.c"));
    let exe = dir.join(name);
    std::fs::write(&src, source).expect("write the generated C program");

    let cc = std::env::var("CC").unwrap_or_else(|_| String::from("cc"));
    let output = Command::new(&cc)
        .args([
            "-std=gnu11",
            "-Wall",
            "-Wextra",
            "-Wpadded",
            "-Werror",
            "-O1",
        ])
        .arg("-I")
        .arg(uapi_include_dir())
        .arg("-o")
        .arg(&exe)
        .arg(&src)
        .output()
        .unwrap_or_else(|e| {
            panic!(
                "cannot run the C compiler `{cc}` ({e}): the UAPI header check needs one; \
                 install gcc or clang, or point $CC at one"
            )
        });
    if !output.status.success() {
        return Err(format!(
            "`{cc}` failed to compile {} against {}:\n{}",
            src.display(),
            header_path().display(),
            String::from_utf8_lossy(&output.stderr)
        ));
    }

    let run = Command::new(&exe)
        .output()
        .expect("run the generated C program");
    assert!(
        run.status.success(),
        "{} failed: {:?}",
        exe.display(),
        run.status
    );
    Ok(String::from_utf8(run.stdout).expect("the C program prints ASCII"))
}

fn compile_and_run(name: &str, source: &str) -> String {
    try_compile_and_run(name, source).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn header_matches_the_rust_abi() {
    let structs = layout::uapi_structs();
    let constants = layout::uapi_constants();
    let crcs = layout::crc_vectors();

    let rust = layout::render(&structs, &constants, &crcs);
    let c_output = compile_and_run(
        "cxl_ccm_abi",
        &layout::c_program(&structs, &constants, &crcs),
    );
    let c: Vec<String> = c_output.lines().map(String::from).collect();

    assert_eq!(rust.len(), c.len(), "the two tables have different lengths");
    if let Err(errors) = compare(&rust, &c) {
        panic!(
            "include/uapi/linux/cxl_ccm.h disagrees with drivers/cxl_ccm/{{abi,uapi}}.rs:\n  {}",
            errors.join("\n  ")
        );
    }
    // Same order too: the C program printed exactly the Rust table.
    assert_eq!(rust, c);
}

#[test]
fn header_compiles_as_the_kernel_compiles_uapi_headers() {
    // usr/include/Makefile of the kernel compiles every UAPI header alone with these flags.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ccm-abi");
    std::fs::create_dir_all(&dir).expect("create the scratch directory");
    let src = dir.join("cxl_ccm_c90.c");
    std::fs::write(&src, "#include <linux/cxl_ccm.h>\n").expect("write the test unit");
    let cc = std::env::var("CC").unwrap_or_else(|_| String::from("cc"));
    let output = Command::new(&cc)
        .args([
            "-std=c90",
            "-Wall",
            "-Werror=implicit-function-declaration",
            "-Werror",
        ])
        .args(["-fsyntax-only", "-I"])
        .arg(uapi_include_dir())
        .arg(&src)
        .output()
        .unwrap_or_else(|e| panic!("cannot run the C compiler `{cc}` ({e})"));
    assert!(
        output.status.success(),
        "{} is not valid C90 (the kernel's header test would fail):\n{}",
        header_path().display(),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn the_tables_cover_the_whole_header() {
    let text = std::fs::read_to_string(header_path()).expect("read the header");
    let (macros, structs) = layout::header_names(&text);

    let mut listed: Vec<&str> = layout::uapi_constants().iter().map(|c| c.name).collect();
    listed.sort_unstable();
    let mut in_header: Vec<&str> = macros.iter().map(String::as_str).collect();
    in_header.sort_unstable();
    assert_eq!(
        listed, in_header,
        "every CXL_CCM_* constant of the header must be in layout::uapi_constants() and vice versa"
    );

    let mut listed: Vec<&str> = layout::uapi_structs().iter().map(|s| s.name).collect();
    listed.sort_unstable();
    let mut in_header: Vec<&str> = structs.iter().map(String::as_str).collect();
    in_header.sort_unstable();
    assert_eq!(
        listed, in_header,
        "every struct cxl_ccm_* of the header must be in layout::uapi_structs() and vice versa"
    );
}

/// The user-ABI program compiled against an edited copy of the header.
fn run_against_edited_header(name: &str, from: &str, to: &str) -> Result<Vec<String>, String> {
    let text = std::fs::read_to_string(header_path()).expect("read the header");
    let edited = text.replacen(from, to, 1);
    assert_ne!(
        edited, text,
        "the test's edit no longer applies to the header"
    );
    let program = layout::c_program(&layout::uapi_structs(), &layout::uapi_constants(), &[])
        .replace("#include <linux/cxl_ccm.h>", &edited);
    try_compile_and_run(name, &program).map(|out| out.lines().map(String::from).collect())
}

#[test]
fn a_moved_field_fails_the_comparison() {
    // `flags` and `status` of the metadata record swapped: no padding, only offsets change.
    let c = run_against_edited_header(
        "cxl_ccm_abi_swapped",
        "\t__u16 flags;\n\t__u16 status;\n};",
        "\t__u16 status;\n\t__u16 flags;\n};",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let rust = layout::render(&layout::uapi_structs(), &layout::uapi_constants(), &[]);
    let errors = compare(&rust, &c).unwrap_err();
    assert_eq!(
        errors,
        [
            "`offsetof cxl_ccm_metadata_record.flags`: Rust says 28 2, C says 30 2",
            "`offsetof cxl_ccm_metadata_record.status`: Rust says 30 2, C says 28 2",
        ]
    );
}

#[test]
fn a_changed_constant_fails_the_comparison() {
    let c = run_against_edited_header(
        "cxl_ccm_abi_constant",
        "#define CXL_CCM_KERNEL_KNN\t\t2",
        "#define CXL_CCM_KERNEL_KNN\t\t9",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let rust = layout::render(&layout::uapi_structs(), &layout::uapi_constants(), &[]);
    assert_eq!(
        compare(&rust, &c).unwrap_err(),
        ["`const CXL_CCM_KERNEL_KNN`: Rust says 2, C says 9"]
    );
}

#[test]
fn implicit_padding_in_the_header_does_not_compile() {
    // `result_offset` moved after `checksum`: 4 bytes of hidden padding before it.
    let err = run_against_edited_header(
        "cxl_ccm_abi_padded",
        "\t__u32 length;\n\t__u64 result_offset;\n\t__u32 checksum;",
        "\t__u32 length;\n\t__u32 checksum;\n\t__u64 result_offset;",
    )
    .unwrap_err();
    assert!(err.contains("padding struct"), "{err}");
}

#[test]
fn crc32c_is_the_standard_one_and_composes() {
    // The iSCSI/ext4 CRC32C check value.
    assert_eq!(ccm_abi::abi::crc32c(b"123456789"), 0xE306_9283);
    assert_eq!(ccm_abi::abi::crc32c(b""), 0);
    // A payload that wraps around the payload ring is hashed in two pieces.
    let data: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
    for split in [0, 1, 31, 32, 500, 1000] {
        let (a, b) = data.split_at(split);
        let two = !ccm_abi::abi::crc32c_update(ccm_abi::abi::crc32c_update(!0, a), b);
        assert_eq!(two, ccm_abi::abi::crc32c(&data), "split at {split}");
    }
}
