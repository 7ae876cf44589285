"""The small pre-norm decoder-only transformer of the paper (spec §3.4), all of it in this file.

Token + learned position embeddings, n_layer blocks of (LayerNorm -> causal self-attention ->
residual, LayerNorm -> GELU MLP -> residual), a final LayerNorm and an untied unembedding with bias.
Standard pre-norm: Q, K and V all read the normalised stream (the precursor code normalised only
the query; we do not reproduce that). Attention is a plain matmul + mask + softmax.

`forward(idx, last_only=True)` is an exact shortcut for losses that read only the last position:
the last block still needs K and V at every position, but its query, attention output, MLP, final
norm and unembedding only at the last one.
"""

from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from critwin_lib.config import ModelConfig


class Attention(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.n_head, self.d_head = cfg.n_head, cfg.d_model // cfg.n_head
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model)
        self.proj = nn.Linear(cfg.d_model, cfg.d_model)  # residual output projection

    def forward(self, x: torch.Tensor, last_only: bool = False) -> torch.Tensor:
        B, T, C = x.shape
        H, D = self.n_head, self.d_head
        w_q, w_kv = self.qkv.weight.split([C, 2 * C])
        b_q, b_kv = self.qkv.bias.split([C, 2 * C])
        k, v = F.linear(x, w_kv, b_kv).split(C, dim=-1)  # (B, T, C) each
        xq = x[:, -1:] if last_only else x
        Tq = xq.shape[1]
        q = F.linear(xq, w_q, b_q).view(B, Tq, H, D).transpose(1, 2)  # (B, H, Tq, D)
        k = k.view(B, T, H, D).transpose(1, 2)  # (B, H, T, D)
        v = v.view(B, T, H, D).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(D))  # (B, H, Tq, T)
        if not last_only:  # the last query may see every key; earlier ones only the past
            mask = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1)
            att = att.masked_fill(mask, float("-inf"))
        y = att.softmax(dim=-1) @ v  # (B, H, Tq, D)
        return self.proj(y.transpose(1, 2).reshape(B, Tq, C))


class MLP(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.fc = nn.Linear(cfg.d_model, cfg.d_mlp)
        self.proj = nn.Linear(cfg.d_mlp, cfg.d_model)  # residual output projection

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(F.gelu(self.fc(x)))


class Block(nn.Module):
    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(cfg.d_model)
        self.attn = Attention(cfg)
        self.ln2 = nn.LayerNorm(cfg.d_model)
        self.mlp = MLP(cfg)

    def forward(self, x: torch.Tensor, last_only: bool = False) -> torch.Tensor:
        a = self.attn(self.ln1(x), last_only)  # (B, 1 or T, C)
        x = (x[:, -1:] if last_only else x) + a
        return x + self.mlp(self.ln2(x))


class TinyTransformer(nn.Module):
    def __init__(self, cfg: ModelConfig, generator: torch.Generator | None = None) -> None:
        super().__init__()
        self.cfg = cfg
        self.tok_emb = nn.Embedding(cfg.vocab_size, cfg.d_model)
        self.pos_emb = nn.Embedding(cfg.max_pos, cfg.d_model)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, cfg.vocab_size)  # untied unembedding
        init_weights(self, cfg, generator)

    def forward(self, idx: torch.Tensor, last_only: bool = False) -> torch.Tensor:
        """idx (B, T) -> logits (B, T, V), or (B, 1, V) at the last position when last_only."""
        return self.head(self.hidden(idx, last_only))

    def hidden(self, idx: torch.Tensor, last_only: bool = False) -> torch.Tensor:
        """The residual stream after the final LayerNorm: what the unembedding reads."""
        B, T = idx.shape
        x = self.tok_emb(idx) + self.pos_emb(torch.arange(T, device=idx.device))  # (B, T, C)
        last = len(self.blocks) - 1
        for i, block in enumerate(self.blocks):
            x = block(x, last_only and i == last)
        return self.ln_f(x)


def init_weights(model: TinyTransformer, cfg: ModelConfig, generator: torch.Generator | None = None) -> None:
    """N(0, std²) for embeddings and weight matrices, std = cfg.init_std (γ·σ₀ or d_model^-γ).

    Residual output projections get std / sqrt(2·n_layer) (GPT-2), so the residual stream's scale
    does not grow with depth. Biases start at 0, LayerNorm at (1, 0).
    """
    std = cfg.init_std
    residual_std = std / math.sqrt(2 * cfg.n_layer)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("bias"):
                p.zero_()
            elif ".ln" in name or name.startswith("ln_"):
                p.fill_(1.0)
            else:
                s = residual_std if name.endswith("proj.weight") else std
                p.normal_(0.0, s, generator=generator)


def decay_groups(model: nn.Module, which: str) -> tuple[list[nn.Parameter], list[nn.Parameter]]:
    """Split parameters into (decayed, not decayed): "all" decays everything (as the precursor
    code's AdamW on model.parameters()); "matrices" decays only 2-D weights, embeddings included;
    "matrices-no-embeddings" the same without the token and position embeddings (the paper's set)."""
    params = list(model.parameters())
    if which == "all":
        return params, []
    embeddings = {id(m.weight) for m in model.modules() if isinstance(m, nn.Embedding)}
    decayed = [p for p in params if p.dim() >= 2 and not (which == "matrices-no-embeddings" and id(p) in embeddings)]
    ids = {id(p) for p in decayed}
    return decayed, [p for p in params if id(p) not in ids]
