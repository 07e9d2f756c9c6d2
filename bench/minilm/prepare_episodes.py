#!/usr/bin/env python3
"""Few-shot text classification episodes from Debian's fortune files,
tokenised with MiniLM's own WordPiece tokenizer (bench/minilm.sh).

The data: Debian's `fortunes` package, /usr/share/games/fortunes/<category>,
entries separated by lines holding "%". A class is a category (computers,
food, law, medicine, ...); an entry is a short text. It is installed from
Debian's archive (no download from elsewhere), its categories are topics a
sentence encoder can tell apart without being trivial to (the same
author's aphorisms appear under several), and nothing in it was part of
MiniLM's training set as a classification task.

Each entry is tokenised with the `tokenizers` library and MiniLM's
tokenizer.json ([CLS] ... [SEP]); entries shorter than LENGTH tokens are
left out and longer ones cut to LENGTH - 1 tokens and [SEP], so every
sequence is exactly LENGTH tokens and needs no padding mask. Categories with
at least MIN_ENTRIES such entries are used; sorted by name and shuffled with
the seed, the first TEST_CLASSES are held out for the test episodes, the
rest meta-train. Within each class the entries are shuffled and split in
halves: training episodes draw from the first half of the training classes,
test episodes from the held-out classes only.

An episode: WAYS classes drawn at random, labelled 0..WAYS-1 in the order
drawn, SHOTS support and QUERY query entries of each (distinct), class-major.
Written as safetensors with support.x [N, WAYS*SHOTS, LENGTH] I64,
support.y [N, WAYS*SHOTS] I64, query.x, query.y: metac's `episodes` task
kind, and what the baselines read, so every method sees the same episodes.

  prepare_episodes.py --tokenizer tokenizer.json --out DIR
      [--fortunes /usr/share/games/fortunes] [--length 32] [--ways 5]
      [--shots 5] [--query 5] [--train-episodes 2000] [--test-episodes 200]
"""

import argparse
import json
import pathlib
import random

import numpy as np
from safetensors.numpy import save_file
from tokenizers import Tokenizer


def read_entries(path):
    """The entries of a fortune file, whitespace collapsed."""
    text = path.read_text(encoding="utf-8", errors="replace")
    entries, current = [], []
    for line in text.splitlines():
        if line.strip() == "%":
            if current:
                entries.append(" ".join(" ".join(current).split()))
            current = []
        else:
            current.append(line)
    if current:
        entries.append(" ".join(" ".join(current).split()))
    return [e for e in entries if e]


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokenizer", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--fortunes", default="/usr/share/games/fortunes")
    parser.add_argument("--length", type=int, default=32)
    parser.add_argument("--ways", type=int, default=5)
    parser.add_argument("--shots", type=int, default=5)
    parser.add_argument("--query", type=int, default=5)
    parser.add_argument("--min-entries", type=int, default=40)
    parser.add_argument("--test-classes", type=int, default=8)
    parser.add_argument("--train-episodes", type=int, default=2000)
    parser.add_argument("--test-episodes", type=int, default=200)
    parser.add_argument("--seed", type=int, default=2026)
    args = parser.parse_args()

    tokenizer = Tokenizer.from_file(args.tokenizer)
    tokenizer.no_padding()
    tokenizer.no_truncation()
    sep = tokenizer.token_to_id("[SEP]")
    classes = {}
    for path in sorted(pathlib.Path(args.fortunes).iterdir()):
        # The data files, not their .dat indexes or the offensive/ folder.
        if not path.is_file() or path.suffix == ".dat" or path.is_symlink():
            continue
        entries = read_entries(path)
        encoded = tokenizer.encode_batch(entries)
        sequences = [e.ids[:args.length - 1] + [sep] for e in encoded
                     if len(e.ids) >= args.length]
        if len(sequences) >= args.min_entries:
            classes[path.name] = sequences
    names = sorted(classes)
    rng = random.Random(args.seed)
    rng.shuffle(names)
    test_names, train_names = names[:args.test_classes], names[args.test_classes:]
    if len(test_names) < args.ways or len(train_names) < args.ways:
        raise SystemExit(f"only {len(names)} categories have {args.min_entries} "
                         f"entries of {args.length} tokens")
    per_class = args.shots + args.query
    pools = {}
    for name in names:
        entries = list(classes[name])
        rng.shuffle(entries)
        pools[name] = entries[:len(entries) // 2] if name in train_names else entries
        if len(pools[name]) < per_class:
            raise SystemExit(f"'{name}' has {len(pools[name])} entries, fewer "
                             f"than {per_class}")

    def episodes(count, from_names):
        sx, sy, qx, qy = [], [], [], []
        for _ in range(count):
            chosen = rng.sample(from_names, args.ways)
            support, query = [], []
            for label, name in enumerate(chosen):
                picked = rng.sample(pools[name], per_class)
                support += [(s, label) for s in picked[:args.shots]]
                query += [(s, label) for s in picked[args.shots:]]
            sx.append([s for s, _ in support])
            sy.append([label for _, label in support])
            qx.append([s for s, _ in query])
            qy.append([label for _, label in query])
        return {"support.x": np.array(sx, dtype=np.int64),
                "support.y": np.array(sy, dtype=np.int64),
                "query.x": np.array(qx, dtype=np.int64),
                "query.y": np.array(qy, dtype=np.int64)}

    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    save_file(episodes(args.train_episodes, train_names),
              str(out / "train-episodes.safetensors"))
    save_file(episodes(args.test_episodes, test_names),
              str(out / "test-episodes.safetensors"))
    summary = {
        "length": args.length, "ways": args.ways, "shots": args.shots,
        "query": args.query, "seed": args.seed,
        "train_classes": {n: len(pools[n]) for n in sorted(train_names)},
        "test_classes": {n: len(pools[n]) for n in sorted(test_names)},
        "left_out": sorted(set(p.name for p in pathlib.Path(args.fortunes).iterdir()
                               if p.is_file() and p.suffix != ".dat") - set(names)),
    }
    (out / "episodes.json").write_text(json.dumps(summary, indent=1) + "\n")
    print(f"{len(train_names)} training classes, {len(test_names)} test classes "
          f"(entries of >= {args.length} tokens: "
          + ", ".join(f"{n} {len(classes[n])}" for n in sorted(names)) + ")")


if __name__ == "__main__":
    main()
