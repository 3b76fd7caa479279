"""CPU speed of a built ctranslate2 wheel against the official one (`cargo xtask bench`).

make:  writes a randomly initialised Whisper model straight from ctranslate2's own model spec
       (ctranslate2.specs.WhisperSpec filled with seeded numpy weights): no torch, no
       transformers, no downloads, so it runs offline anywhere the wheel installs.
time:  loads a model in this venv's ctranslate2 and times encode (one 30 s window) and a greedy
       generate of --tokens tokens with end-of-text suppressed; prints one JSON line.
run:   the whole comparison: for each compute type and round, `time` in the built venv and in
       the official venv, alternating which goes first; prints medians, bests and ratios
       (official / ours: above 1 = ours faster) and writes JSON.
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

N_MELS = 80
FRAMES = 3000
SOURCE_POSITIONS = FRAMES // 2
TARGET_POSITIONS = 448
VOCAB = 51865
# Whisper's sizes: d_model, layers (encoder = decoder), heads.
SIZES = {
    "tiny": (384, 4, 6),
    "base": (512, 6, 8),
    "small": (768, 12, 12),
    "medium": (1024, 24, 16),
}
SPECIAL = ["<|endoftext|>", "<|startoftranscript|>", "<|en|>", "<|translate|>",
           "<|transcribe|>", "<|startoflm|>", "<|startofprev|>", "<|nocaptions|>",
           "<|notimestamps|>"]
PROMPT = ["<|startoftranscript|>", "<|en|>", "<|transcribe|>", "<|notimestamps|>"]


def make(args):
    import numpy as np
    import ctranslate2
    from ctranslate2.specs import whisper_spec

    d, layers, heads = SIZES[args.size]
    ffn = 4 * d
    rng = np.random.default_rng(args.seed)

    def rand(*shape):
        return (rng.standard_normal(shape, dtype=np.float32) * 0.02).astype(np.float32)

    def linear(spec, out_dim, in_dim, bias=True):
        spec.weight = rand(out_dim, in_dim)
        if bias:
            spec.bias = rand(out_dim)

    def norm(spec):
        spec.gamma = np.ones(d, dtype=np.float32)
        spec.beta = np.zeros(d, dtype=np.float32)

    def attention(spec, cross):
        norm(spec.layer_norm)
        if cross:  # query, fused key+value, output (as the converter fuses them)
            linear(spec.linear[0], d, d)
            linear(spec.linear[1], 2 * d, d)
            linear(spec.linear[2], d, d)
        else:  # fused query+key+value, output
            linear(spec.linear[0], 3 * d, d)
            linear(spec.linear[1], d, d)

    def ffn_block(spec):
        norm(spec.layer_norm)
        linear(spec.linear_0, ffn, d)
        linear(spec.linear_1, d, ffn)

    spec = whisper_spec.WhisperSpec(layers, heads, layers, heads)
    enc = spec.encoder
    enc.conv1.weight, enc.conv1.bias = rand(d, N_MELS, 3), rand(d)
    enc.conv2.weight, enc.conv2.bias = rand(d, d, 3), rand(d)
    enc.position_encodings.encodings = rand(SOURCE_POSITIONS, d)
    norm(enc.layer_norm)
    for layer in enc.layer:
        attention(layer.self_attention, cross=False)
        ffn_block(layer.ffn)
    dec = spec.decoder
    dec.embeddings.weight = rand(VOCAB, d)
    dec.position_encodings.encodings = rand(TARGET_POSITIONS, d)
    norm(dec.layer_norm)
    for layer in dec.layer:
        attention(layer.self_attention, cross=False)
        attention(layer.attention, cross=True)
        ffn_block(layer.ffn)
    linear(dec.projection, VOCAB, d, bias=False)

    plain = [f"t{i}" for i in range(VOCAB - len(SPECIAL))]
    spec.register_vocabulary(plain + SPECIAL)
    ids = {token: VOCAB - len(SPECIAL) + i for i, token in enumerate(SPECIAL)}
    spec.config.suppress_ids = []
    spec.config.suppress_ids_begin = [ids["<|endoftext|>"]]
    spec.config.lang_ids = [ids["<|en|>"]]
    spec.config.alignment_heads = [(layers // 2, 0)]
    spec.validate()
    spec.optimize(quantization=None)  # float32 on disk; compute types convert at load
    os.makedirs(args.out, exist_ok=True)
    spec.save(args.out)
    print(f"wrote a random Whisper {args.size} (d_model {d}, {layers}+{layers} layers, "
          f"vocabulary {VOCAB}) with ctranslate2 {ctranslate2.__version__}: {args.out}")
    return 0


def time_model(args):
    import numpy as np
    import ctranslate2

    model = ctranslate2.models.Whisper(
        args.model, device="cpu", compute_type=args.compute_type, intra_threads=args.threads
    )
    rng = np.random.default_rng(1234)
    mel = rng.standard_normal((1, N_MELS, FRAMES)).astype(np.float32)
    features = ctranslate2.StorageView.from_array(mel)
    eot = VOCAB - len(SPECIAL)  # <|endoftext|>

    def encode():
        model.encode(features, to_cpu=True)

    # Whisper generates at most max_length / 2 tokens (CTranslate2 v4.7.1,
    # src/models/whisper.cc: `std::min(total_max_length / 2, ...)`), so ask for twice as many.
    def generate():
        result = model.generate(features, [PROMPT], beam_size=1, max_length=2 * args.tokens,
                                suppress_tokens=[eot], suppress_blank=False)
        return len(result[0].sequences_ids[0])

    encode()  # warm-up: allocator, primitive caches, OpenMP threads
    generate()
    out = {"encode": [], "generate": []}
    tokens = 0
    for _ in range(args.repeat):
        start = time.perf_counter()
        encode()
        out["encode"].append(time.perf_counter() - start)
        start = time.perf_counter()
        tokens = generate()
        out["generate"].append(time.perf_counter() - start)
    if tokens != args.tokens:
        print(f"FAILED: generate returned {tokens} tokens, not {args.tokens}", file=sys.stderr)
        return 1
    out["tokens"] = tokens
    out["version"] = ctranslate2.__version__
    out["file"] = ctranslate2.__file__
    print(json.dumps(out))
    return 0


def cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def run(args):
    sides = [("ours", args.ours), ("official", args.official)]
    env = dict(os.environ)
    env.setdefault("OMP_NUM_THREADS", str(args.threads))
    for key, value in (v.split("=", 1) for v in args.env):
        env[key] = value
    results = {}
    failed = []
    for ctype in args.compute_types:
        samples = {name: {"encode": [], "generate": []} for name, _ in sides}
        for r in range(args.rounds):
            if ctype in failed:
                break
            order = sides if r % 2 == 0 else sides[::-1]
            for name, python in order:
                done = subprocess.run(
                    [python, __file__, "time", "--model", args.model, "--compute-type", ctype,
                     "--threads", str(args.threads), "--tokens", str(args.tokens),
                     "--repeat", str(args.repeat)],
                    env=env, capture_output=True, text=True)
                if done.returncode != 0:
                    sys.stderr.write(done.stderr)
                    print(f"FAILED: {name} ({python}) on {ctype}; the other types go on",
                          file=sys.stderr)
                    failed.append(ctype)
                    break
                row = json.loads(done.stdout.strip().splitlines()[-1])
                print(f"{ctype} round {r + 1}/{args.rounds} {name}: encode "
                      f"{min(row['encode']):.3f} s, generate {min(row['generate']):.3f} s",
                      flush=True)
                for what in ("encode", "generate"):
                    samples[name][what].extend(row[what])
                samples[name]["tokens"] = row["tokens"]
                samples[name]["version"] = row["version"]
        if ctype not in failed:
            results[ctype] = samples

    table = []
    for ctype, samples in results.items():
        for what in ("encode", "generate"):
            ours, official = samples["ours"][what], samples["official"][what]
            row = {
                "compute_type": ctype, "what": what,
                "ours_median_s": statistics.median(ours),
                "official_median_s": statistics.median(official),
                "ours_best_s": min(ours), "official_best_s": min(official),
            }
            row["ratio_median"] = row["official_median_s"] / row["ours_median_s"]
            row["ratio_best"] = row["official_best_s"] / row["ours_best_s"]
            table.append(row)

    print(f"\nCPU: {cpu_name()}, {os.cpu_count()} logical CPUs; {args.threads} thread(s); "
          f"Whisper {args.size} (random weights); {args.rounds} round(s) x {args.repeat}")
    print("ratio = official / ours (above 1.0: ours faster)\n")
    print(f"| compute type | step | ours median | official median | ratio (median) | "
          f"ratio (best) |")
    print("|---|---|---|---|---|---|")
    for row in table:
        step = "encode 30 s" if row["what"] == "encode" else f"generate {args.tokens} tokens"
        print(f"| {row['compute_type']} | {step} | {row['ours_median_s']:.3f} s | "
              f"{row['official_median_s']:.3f} s | {row['ratio_median']:.3f} | "
              f"{row['ratio_best']:.3f} |")
    report = {
        "cpu": cpu_name(), "logical_cpus": os.cpu_count(), "threads": args.threads,
        "size": args.size, "rounds": args.rounds, "repeat": args.repeat, "tokens": args.tokens,
        "env": args.env, "ours": args.ours, "official": args.official,
        "results": table, "samples": results, "failed": failed,
    }
    if args.json:
        with open(args.json, "w") as f:
            json.dump(report, f, indent=2)
        print(f"\nJSON: {args.json}")
    if failed:
        print(f"FAILED: {', '.join(failed)} (see above)", file=sys.stderr)
        return 1
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("make")
    p.add_argument("--out", required=True)
    p.add_argument("--size", choices=sorted(SIZES), default="base")
    p.add_argument("--seed", type=int, default=0)
    p = sub.add_parser("time")
    p.add_argument("--model", required=True)
    p.add_argument("--compute-type", default="float32")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--tokens", type=int, default=32)
    p.add_argument("--repeat", type=int, default=1)
    p = sub.add_parser("run")
    p.add_argument("--ours", required=True, help="python of the venv with the built wheel")
    p.add_argument("--official", required=True, help="python of the venv with the official wheel")
    p.add_argument("--model", required=True)
    p.add_argument("--size", choices=sorted(SIZES), default="base")
    p.add_argument("--compute-types", nargs="+", default=["float32", "int8"])
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--tokens", type=int, default=32)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--env", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--json")
    args = parser.parse_args()
    return {"make": make, "time": time_model, "run": run}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
