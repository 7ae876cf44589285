"""Chart helpers: colours for any number of conditions."""

from critwin_lib import plotting


def test_color_scale_gives_every_condition_a_colour_however_many_there_are():
    domain = [f"condition {i}" for i in range(12)]  # none has a colour of its own; the fallback list is shorter
    scale = plotting.color_scale(domain).to_dict()
    assert scale["domain"] == domain and len(scale["range"]) == 12
    assert all(isinstance(c, str) and c.startswith("#") for c in scale["range"])
