"""Transcribes one audio file with faster-whisper on top of whichever ctranslate2 is importable
(`cargo xtask verify --transcribe`; frozen by PyInstaller, the app of `cargo xtask smoke
--frozen`). Prints the transcript and writes a JSON report; the WER is judged by xtask.

Bad input exits 2 with one line naming the file or the device (never only a traceback):
a model folder that is not a CTranslate2 Whisper model, a model.bin CTranslate2 cannot load,
an audio file that cannot be decoded or is silent, `--device cuda` with no GPU visible.
Anything else that fails (an import error: a missing library) exits 1.

The audio is decoded to a 16 kHz float32 array first and that array is transcribed, as the
maintainers' app does with what it records (PinW/whisper-key-local passes numpy arrays).
"""

import argparse
import json
import os
import sys
import time

MODEL_FILES = ("config.json", "model.bin")
VOCABULARY_FILES = ("vocabulary.txt", "vocabulary.json")
SAMPLE_RATE = 16000


def bad_input(message):
    print(f"error: {message}", file=sys.stderr)
    sys.exit(2)


def failed(message):
    print(f"error: {message}", file=sys.stderr)
    sys.exit(1)


def check_model_folder(model):
    if not os.path.isdir(model):
        bad_input(f"{model}: the --model folder does not exist")
    missing = [f for f in MODEL_FILES if not os.path.isfile(os.path.join(model, f))]
    if not any(os.path.isfile(os.path.join(model, f)) for f in VOCABULARY_FILES):
        missing.append(" or ".join(VOCABULARY_FILES))
    if missing:
        bad_input(
            f"{model} is not a CTranslate2 Whisper model: no {', '.join(missing)} "
            "(convert one with ct2-transformers-converter, or leave --model out to use the "
            "pinned model)"
        )
    try:
        with open(os.path.join(model, "config.json"), encoding="utf-8") as f:
            config = json.load(f)
    except (OSError, ValueError) as e:
        bad_input(f"{os.path.join(model, 'config.json')} is not readable JSON: {e}")
    if not isinstance(config, dict) or "suppress_ids" not in config:
        bad_input(
            f"{os.path.join(model, 'config.json')} is not a Whisper model's config "
            "(no suppress_ids): --model must be a faster-whisper (CTranslate2) Whisper model"
        )


def load_audio(path):
    import numpy as np
    from faster_whisper import decode_audio

    if not os.path.isfile(path):
        bad_input(f"{path}: the audio file does not exist")
    try:
        audio = decode_audio(path, sampling_rate=SAMPLE_RATE)
    except Exception as e:  # PyAV raises its own errors for anything it cannot decode
        bad_input(f"{path} cannot be decoded as audio: {e}")
    if audio.size == 0:
        bad_input(f"{path} holds no audio samples")
    if float(np.max(np.abs(audio))) < 1e-4:
        bad_input(f"{path} is silent (peak below -80 dBFS): give a file with speech")
    return audio.astype(np.float32)


def pick_device(requested, ctranslate2):
    gpus = ctranslate2.get_cuda_device_count()
    if requested == "auto":
        return ("cuda" if gpus > 0 else "cpu"), gpus
    if requested == "cuda" and gpus == 0:
        bad_input(
            "--device cuda: ctranslate2 sees no GPU (get_cuda_device_count() = 0): check the "
            "driver with `cargo xtask doctor`, or use --device cpu"
        )
    return requested, gpus


def loaded_libraries():
    """The shared libraries this process has loaded (full paths), so that xtask can tell
    which came from inside a frozen app and which from somewhere else on the machine."""
    if sys.platform == "win32":
        import ctypes
        from ctypes import wintypes

        psapi = ctypes.WinDLL("psapi")
        kernel32 = ctypes.WinDLL("kernel32")
        kernel32.GetCurrentProcess.restype = wintypes.HANDLE
        # Without argtypes ctypes passes a Python int as a C int, and the pseudo-handle of
        # the current process (-1 as a 64-bit HANDLE) overflows it.
        psapi.EnumProcessModules.argtypes = [
            wintypes.HANDLE,
            ctypes.POINTER(wintypes.HMODULE),
            wintypes.DWORD,
            ctypes.POINTER(wintypes.DWORD),
        ]
        psapi.EnumProcessModules.restype = wintypes.BOOL
        psapi.GetModuleFileNameExW.argtypes = [
            wintypes.HANDLE,
            wintypes.HMODULE,
            wintypes.LPWSTR,
            wintypes.DWORD,
        ]
        psapi.GetModuleFileNameExW.restype = wintypes.DWORD
        process = kernel32.GetCurrentProcess()
        modules = (wintypes.HMODULE * 4096)()
        needed = wintypes.DWORD()
        if not psapi.EnumProcessModules(
            process, modules, ctypes.sizeof(modules), ctypes.byref(needed)
        ):
            return []
        count = min(needed.value // ctypes.sizeof(wintypes.HMODULE), len(modules))
        name = ctypes.create_unicode_buffer(32768)
        paths = []
        for module in modules[:count]:
            if psapi.GetModuleFileNameExW(process, module, name, len(name)):
                paths.append(name.value)
        return sorted(set(paths))
    paths = set()
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as maps:
            for line in maps:
                parts = line.split(None, 5)
                if len(parts) == 6 and ".so" in parts[5]:
                    paths.add(parts[5].strip())
    except OSError:
        return []
    return sorted(paths)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--audio", required=True)
    parser.add_argument("--device", default="auto", choices=["auto", "cpu", "cuda"])
    parser.add_argument("--compute-type", default="default")
    parser.add_argument("--language", default="en")
    parser.add_argument("--beam-size", type=int, default=5)
    parser.add_argument("--threads", type=int, default=0)
    parser.add_argument("--json", help="where to write the report")
    args = parser.parse_args()

    check_model_folder(args.model)
    try:
        import ctranslate2
        import faster_whisper
    except Exception as e:  # ImportError, or OSError from a DLL that does not load
        failed(f"cannot import ctranslate2 and faster_whisper: {type(e).__name__}: {e}")
    audio = load_audio(args.audio)
    device, gpus = pick_device(args.device, ctranslate2)

    started = time.perf_counter()
    try:
        model = faster_whisper.WhisperModel(
            args.model,
            device=device,
            compute_type=args.compute_type,
            cpu_threads=args.threads,
            local_files_only=True,
        )
    except ValueError as e:  # an unsupported compute type for this device
        bad_input(f"--compute-type {args.compute_type} on {device}: {e}")
    except RuntimeError as e:
        bad_input(
            f"{os.path.join(args.model, 'model.bin')} cannot be loaded by ctranslate2 "
            f"{ctranslate2.__version__} on {device}: {e}"
        )
    loaded = time.perf_counter()
    segments, info = model.transcribe(
        audio, language=args.language, beam_size=args.beam_size, vad_filter=False
    )
    text = " ".join(s.text.strip() for s in segments).strip()
    done = time.perf_counter()

    seconds = len(audio) / SAMPLE_RATE
    report = {
        "text": text,
        "device": model.model.device,
        "compute_type": model.model.compute_type,
        "gpus": gpus,
        "audio_seconds": round(seconds, 3),
        "load_seconds": round(loaded - started, 3),
        "transcribe_seconds": round(done - loaded, 3),
        "real_time_factor": round((done - loaded) / seconds, 4),
        "ctranslate2": ctranslate2.__version__,
        "ctranslate2_from": os.path.dirname(os.path.abspath(ctranslate2.__file__)),
        "faster_whisper": faster_whisper.__version__,
        "frozen": bool(getattr(sys, "frozen", False)),
        "executable": sys.executable,
        "loaded_libraries": loaded_libraries(),
    }
    print(f"transcript: {text}")
    print(
        f"device={report['device']} compute_type={report['compute_type']} "
        f"audio={seconds:.1f}s transcribe={report['transcribe_seconds']:.2f}s "
        f"rtf={report['real_time_factor']:.3f} ctranslate2 {report['ctranslate2']} "
        f"from {report['ctranslate2_from']}"
    )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(report, f, indent=2)


if __name__ == "__main__":
    main()
