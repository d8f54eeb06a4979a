"""Items a body stores into a list of images and reads back in the statements that follow.

YOLOv5's Detect head stores `x[i] = x[i].view(bs, self.na, self.no, ny, nx).permute(0, 1, 3, 4, 2)` into the list
of feature maps it was handed, then reads `x[i].sigmoid()`. The list holds channels-last images, so the store
brings the 5-d value to that layout; the read then took the list's item and converted it again (a Transpose each
way, per level). The value stored is kept under a name of its own (`x_i`), the list gets it in its layout, and a
read of the same place (`x[i]`, the same index name or literal) before anything else touches the list or rebinds
the index takes the kept value as it lies.
"""

import re

_PLACE = re.compile(r"^([A-Za-z_]\w*)\[([A-Za-z_]\w*|-?\d+)\]$")


def place_of(code):
    """(list name, index text) for a place `x[i]` / `x[0]`; None for any other target."""
    found = _PLACE.match(code.replace(" ", ""))
    return found.groups() if found else None


def kept_name(place, taken):
    """A new variable name for the value stored at `place` (`x_i`), not one of `taken`."""
    base, index = place
    name = f"{base}_{index.replace('-', 'm')}"
    while name in taken:
        name += "_"
    return name


def still_held(places, text, bound, fresh):
    """The places whose kept values a statement (its source `text`; `bound`: the names it binds, nested statements'
    too) leaves as they were: it neither mentions the list other than through that very place, nor binds the index,
    nor stores into the place or changes it in place (`x[i] = v`, `x[i] += 1`, `x[i].mul_(2)`); `fresh`: the
    places this statement itself stored (kept)."""
    kept = {}
    for code, value in places.items():
        base, index = place_of(code)
        written = rf"(?<![\w.]){re.escape(base)}\s*\[\s*{re.escape(index)}\s*\]"
        changed = rf"{written}\s*((?:[-+*/%@&|^:]|//|\*\*|<<|>>)?=(?!=)|\.\s*\w+_\s*\()"
        if code in fresh or index not in bound and not re.search(rf"(?<![\w.]){re.escape(index)}\s*:=", text) and \
                not re.search(rf"(?<![\w.]){re.escape(base)}\b", re.sub(written, "", text)) and \
                not re.search(changed, text):
            kept[code] = value
    return kept
