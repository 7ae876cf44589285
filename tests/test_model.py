import math

import pytest
import torch

from critwin_lib.config import ModelConfig
from critwin_lib.model import TinyTransformer, decay_groups


def model(**kw) -> TinyTransformer:
    torch.manual_seed(0)
    return TinyTransformer(ModelConfig(**kw), generator=torch.Generator().manual_seed(0)).double()


def test_causal_mask_later_tokens_do_not_change_earlier_logits():
    m = model()
    x = torch.randint(20, 100, (4, 9))
    y = x.clone()
    y[:, 6] = (y[:, 6] + 7) % 80 + 20
    a, b = m(x), m(y)
    assert torch.allclose(a[:, :6], b[:, :6], atol=1e-12)
    assert not torch.allclose(a[:, 6:], b[:, 6:])


def test_last_only_shortcut_equals_full_forward_at_the_last_position():
    m = model(n_layer=3)
    x = torch.randint(1, 201, (5, 9))
    assert torch.allclose(m(x, last_only=True)[:, -1], m(x)[:, -1], atol=1e-12)


def test_prenorm_sublayers_are_invariant_to_the_scale_of_the_block_input():
    # Q, K and V all read the normalised stream: scaling the block input leaves both sublayers' outputs
    # unchanged (a query-only LayerNorm, as in the precursor code, would fail this).
    m = model()
    block = m.blocks[0]
    x = 3 * torch.randn(3, 9, 64, dtype=torch.float64)  # large enough that LayerNorm's eps is negligible
    for c in (4.0, 25.0):
        assert torch.allclose(block.attn(block.ln1(c * x)), block.attn(block.ln1(x)), atol=1e-5)
        assert torch.allclose(block.mlp(block.ln2(c * x)), block.mlp(block.ln2(x)), atol=1e-5)
    assert not torch.allclose(block(4.0 * x) - 4.0 * x, block(x) - x, atol=1e-3)  # the residual is not


# d_model = 256 (many entries per matrix): multiplier std = γ · 256^-1/2, exponent std = 256^-γ
@pytest.mark.parametrize(("gamma", "mode", "std"), [(2.0, "multiplier", 0.125), (0.5, "multiplier", 0.03125),
                                                    (0.5, "exponent", 0.0625), (0.75, "exponent", 256 ** -0.75)])
def test_init_std_per_weight_group_follows_gamma(gamma, mode, std):
    n_layer = 2
    m = TinyTransformer(ModelConfig(init_gamma=gamma, init_mode=mode, n_layer=n_layer, d_model=256, d_mlp=1024),
                        generator=torch.Generator().manual_seed(1))
    for name, p in m.named_parameters():
        if name.endswith("bias"):
            assert torch.all(p == 0), name
        elif ".ln" in name or name.startswith("ln_"):
            assert torch.all(p == 1), name
        else:
            want = std / math.sqrt(2 * n_layer) if name.endswith("proj.weight") else std
            assert p.std().item() == pytest.approx(want, rel=0.05), name
            assert abs(p.mean().item()) < 0.05 * want, name


def test_parameter_count_matches_the_formula():
    c = ModelConfig()
    d, f, v = c.d_model, c.d_mlp, c.vocab_size
    per_block = (3 * d * d + 3 * d) + (d * d + d) + (d * f + f) + (f * d + d) + 4 * d
    want = v * d + c.max_pos * d + c.n_layer * per_block + 2 * d + (d * v + v)
    assert sum(p.numel() for p in TinyTransformer(c).parameters()) == want


def test_decay_groups():
    m = model()
    decayed, plain = decay_groups(m, "all")
    assert len(decayed) == len(list(m.parameters())) and plain == []
    decayed, plain = decay_groups(m, "matrices")
    assert all(p.dim() == 2 for p in decayed) and all(p.dim() == 1 for p in plain) and plain


def test_each_decay_set_names_exactly_the_parameters_it_decays():
    m = model(n_layer=2)
    names = {id(p): n for n, p in m.named_parameters()}
    per_block = {"attn.qkv.weight", "attn.proj.weight", "mlp.fc.weight", "mlp.proj.weight"}
    blocks = {f"blocks.{i}.{n}" for i in range(2) for n in per_block}
    want = {"all": set(names.values()),
            "matrices": blocks | {"tok_emb.weight", "pos_emb.weight", "head.weight"},
            "matrices-no-embeddings": blocks | {"head.weight"}}
    for which, decays in want.items():
        decayed, plain = decay_groups(m, which)
        assert {names[id(p)] for p in decayed} == decays, which
        assert {names[id(p)] for p in plain} == set(names.values()) - decays, which
