"""Checks an installed ctranslate2 wheel from a fresh venv (the `verify` step).

Imports the package, compares its version, and checks that each device supports the
compute types the variant promises. Prints what it found; exits 1 on any mismatch.
"""

import argparse
import sys


def gpu_count(ctranslate2) -> int:
    """CUDA or HIP devices; a HIP runtime with no device raises rather than saying 0."""
    try:
        return ctranslate2.get_cuda_device_count()
    except RuntimeError as error:
        print(f"no GPU: {error}")
        return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--version", required=True, help="expected ctranslate2.__version__")
    parser.add_argument(
        "--compute-types",
        action="append",
        default=[],
        metavar="DEVICE:TYPE,TYPE",
        help="compute types a device must support, e.g. cpu:int8,float32",
    )
    args = parser.parse_args()

    import ctranslate2

    failures = []
    print(f"ctranslate2 {ctranslate2.__version__} from {ctranslate2.__file__}")
    if ctranslate2.__version__ != args.version:
        failures.append(f"version is {ctranslate2.__version__}, expected {args.version}")
    for spec in args.compute_types:
        device, _, wanted = spec.partition(":")
        if device == "cuda" and gpu_count(ctranslate2) == 0:
            # A build machine often has no GPU: the import (and the GPU runtime library
            # loading) is still checked; the GPU's compute types are not.
            print(f"NOT CHECKED: no GPU visible here, so cuda compute types {wanted}")
            continue
        supported = sorted(ctranslate2.get_supported_compute_types(device))
        print(f"{device} compute types: {', '.join(supported)}")
        missing = [t for t in wanted.split(",") if t and t not in supported]
        if missing:
            failures.append(f"{device} lacks compute types {', '.join(missing)}")
    if "cuda" in "".join(args.compute_types):
        print(f"cuda devices: {gpu_count(ctranslate2)}")
    for failure in failures:
        print(f"FAILED: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
