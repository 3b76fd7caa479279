"""One fresh-process measurement: import, first Whisper load, first and second transcription."""
import json, os, sys, time
t0 = time.perf_counter()
import numpy as np
import ctranslate2
t1 = time.perf_counter()
model_dir, label, cache = sys.argv[1], sys.argv[2], sys.argv[3]
model = ctranslate2.models.Whisper(model_dir, device="cuda", compute_type="float16")
t2 = time.perf_counter()
rng = np.random.default_rng(1234)
feats = ctranslate2.StorageView.from_array(rng.standard_normal((1, 80, 3000)).astype(np.float32))
prompt = [["<|startoftranscript|>", "<|en|>", "<|transcribe|>", "<|notimestamps|>"]]
def transcribe():
    s = time.perf_counter()
    r = model.generate(feats, prompt, max_length=16, beam_size=1)
    return time.perf_counter() - s, len(r[0].sequences_ids[0])
first, n1 = transcribe()
second, n2 = transcribe()
print(json.dumps({"label": label, "cache": cache, "import_s": round(t1 - t0, 3), "load_s": round(t2 - t1, 3),
    "first_transcribe_s": round(first, 3), "second_transcribe_s": round(second, 3), "tokens": [n1, n2],
    "ct2": ctranslate2.__version__, "lib": os.environ.get("LD_LIBRARY_PATH", "")}), flush=True)
