"""Numerics check of a ctranslate2 wheel against a reference (`verify --numerics`).

make:    builds a tiny randomly initialised Whisper model with transformers from a config
         (no downloads: a minimal tokenizer is written by hand), saves it, and converts it
         with the ctranslate2 converter of the venv running this script.
encode:  encodes a fixed, seeded log-mel input with a converted model and saves the encoder
         output (float32) to a .npy file; with --generate also checks that generate returns
         tokens.
compare: the largest absolute difference between two .npy files; exit 1 above --tolerance.
"""

import argparse
import json
import os
import sys

N_MELS = 80
FRAMES = 3000
SPECIAL = [
    "<|endoftext|>",
    "<|startoftranscript|>",
    "<|en|>",
    "<|translate|>",
    "<|transcribe|>",
    "<|startoflm|>",
    "<|startofprev|>",
    "<|nocaptions|>",
    "<|notimestamps|>",
]


def make(args):
    import torch
    import transformers
    import ctranslate2

    hf_dir = os.path.join(args.out, "hf")
    ct2_dir = os.path.join(args.out, "ct2")
    os.makedirs(hf_dir, exist_ok=True)

    plain = [chr(c) for c in range(ord("a"), ord("z") + 1)]
    vocab = {token: i for i, token in enumerate(plain + SPECIAL)}
    with open(os.path.join(hf_dir, "vocab.json"), "w") as f:
        json.dump(vocab, f)
    with open(os.path.join(hf_dir, "merges.txt"), "w") as f:
        f.write("#version: 0.2\n")
    tokenizer = transformers.WhisperTokenizer(
        os.path.join(hf_dir, "vocab.json"),
        os.path.join(hf_dir, "merges.txt"),
        additional_special_tokens=SPECIAL[1:],
    )
    tokenizer.save_pretrained(hf_dir)

    ids = {token: vocab[token] for token in SPECIAL}
    config = transformers.WhisperConfig(
        vocab_size=len(vocab) + 16,  # the rest become timestamp tokens
        num_mel_bins=N_MELS,
        encoder_layers=2,
        encoder_attention_heads=4,
        decoder_layers=2,
        decoder_attention_heads=4,
        d_model=64,
        encoder_ffn_dim=128,
        decoder_ffn_dim=128,
        max_source_positions=FRAMES // 2,
        max_target_positions=64,
        pad_token_id=ids["<|endoftext|>"],
        bos_token_id=ids["<|endoftext|>"],
        eos_token_id=ids["<|endoftext|>"],
        decoder_start_token_id=ids["<|startoftranscript|>"],
        suppress_tokens=[],
        begin_suppress_tokens=[ids["<|endoftext|>"]],
    )
    torch.manual_seed(args.seed)
    model = transformers.WhisperForConditionalGeneration(config)
    model.generation_config.suppress_tokens = []
    model.generation_config.begin_suppress_tokens = [ids["<|endoftext|>"]]
    model.save_pretrained(hf_dir)

    converter = ctranslate2.converters.TransformersConverter(hf_dir)
    converter.convert(ct2_dir, force=True)
    print(f"converted a tiny Whisper model with ctranslate2 {ctranslate2.__version__}: {ct2_dir}")
    return 0


def features():
    import numpy as np

    rng = np.random.default_rng(1234)
    return rng.standard_normal((1, N_MELS, FRAMES)).astype(np.float32)


def encode(args):
    import numpy as np
    import ctranslate2

    model = ctranslate2.models.Whisper(
        args.model, device=args.device, compute_type=args.compute_type
    )
    view = ctranslate2.StorageView.from_array(features())
    output = model.encode(view, to_cpu=True)
    array = np.array(output, dtype=np.float32)
    np.save(args.out, array)
    print(
        f"ctranslate2 {ctranslate2.__version__} from {ctranslate2.__file__}: encoded on "
        f"{args.device} ({args.compute_type}) -> {array.shape}, mean {array.mean():.6f}"
    )
    if args.generate:
        vocab = json.load(open(os.path.join(args.model, "vocabulary.json")))
        prompt = ["<|startoftranscript|>", "<|en|>", "<|transcribe|>", "<|notimestamps|>"]
        result = model.generate(view, [prompt], max_length=8, beam_size=1)
        tokens = result[0].sequences_ids[0]
        print(f"generate returned {len(tokens)} token(s): {tokens} (vocabulary {len(vocab)})")
        if not tokens:
            print("FAILED: generate returned no tokens", file=sys.stderr)
            return 1
    return 0


def compare(args):
    import numpy as np

    a, b = np.load(args.a), np.load(args.b)
    if a.shape != b.shape:
        print(f"FAILED: shapes differ: {a.shape} vs {b.shape}", file=sys.stderr)
        return 1
    diff = float(np.max(np.abs(a - b)))
    print(f"max abs difference {diff:.3e} (tolerance {args.tolerance:.0e}) over {a.size} values")
    if not diff <= args.tolerance:
        print("FAILED: the outputs differ beyond the tolerance", file=sys.stderr)
        return 1
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("make")
    p.add_argument("--out", required=True)
    p.add_argument("--seed", type=int, default=0)
    p = sub.add_parser("encode")
    p.add_argument("--model", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--device", default="cpu")
    p.add_argument("--compute-type", default="float32")
    p.add_argument("--generate", action="store_true")
    p = sub.add_parser("compare")
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("--tolerance", type=float, default=1e-4)
    args = parser.parse_args()
    return {"make": make, "encode": encode, "compare": compare}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
