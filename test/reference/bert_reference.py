"""BERT's encoder in PyTorch's own ops, on parameters named as Hugging
Face's BertModel names them (a dict), for check_bert.py and
bench/minilm/baselines.py: word, position and token-type (all 0)
embeddings, LayerNorm, then post-LayerNorm blocks of multi-head
self-attention and a GELU (erf) MLP. `lora` adds low-rank adapters to the
attention's projections: "<layer>.<query|key|value>" -> (A, B, scale), the
projection's output plus scale * x A^T B^T.
"""

import math

import torch

F = torch.nn.functional


def bert_encoder(p, x, heads, layers, eps, lora=None):
    """The last hidden states [n, L, hidden] of ids `x` [n, L]."""
    n, length = x.shape
    hidden = p["embeddings.word_embeddings.weight"].shape[1]
    h = (p["embeddings.word_embeddings.weight"][x]
         + p["embeddings.position_embeddings.weight"][:length]
         + p["embeddings.token_type_embeddings.weight"][0])
    h = F.layer_norm(h, (hidden,), p["embeddings.LayerNorm.weight"],
                     p["embeddings.LayerNorm.bias"], eps)
    width = hidden // heads
    for i in range(layers):
        q = f"encoder.layer.{i}."

        def lin(name, t, adapter=None):
            y = F.linear(t, p[q + name + ".weight"], p[q + name + ".bias"])
            if adapter is not None:
                a, b, scale = adapter
                y = y + scale * (t @ a.t() @ b.t())
            return y

        def norm(name, t):
            return F.layer_norm(t, (hidden,), p[q + name + ".weight"],
                                p[q + name + ".bias"], eps)

        def split(t):
            return t.reshape(n, length, heads, width).transpose(1, 2)

        query, key, value = (
            split(lin("attention.self." + m, h, lora and lora.get(f"{i}.{m}")))
            for m in ("query", "key", "value"))
        weights = torch.softmax(query @ key.transpose(-1, -2) / math.sqrt(width), -1)
        context = (weights @ value).transpose(1, 2).reshape(n, length, hidden)
        h = norm("attention.output.LayerNorm", h + lin("attention.output.dense", context))
        h = norm("output.LayerNorm",
                 h + lin("output.dense", F.gelu(lin("intermediate.dense", h))))
    return h
