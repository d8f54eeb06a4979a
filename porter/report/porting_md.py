"""PORTING.md: what was converted, what was adjusted, what is stubbed, and what was not carried over."""

from porter.codegen.emit import environment


def render_porting_md(source, ctx, manifest, dropped, warnings):
    classes = []
    for name, info in source.classes.items():
        ir = ctx.irs[name]
        classes.append({"name": name, "line": info.line, "status": ir.status, "ops": sorted(ir.ops),
                        "unsupported": ir.unsupported, "adjustments": ir.adjustments,
                        "layouts": list(ir.arg_layouts), "layout_out": ir.layout_out,
                        "renamed": ir.renamed, "mappings": ir.mappings})
    template = environment().get_template("PORTING.md.j2")
    return template.render(source_name=source.path.name, manifest=manifest, classes=classes, dropped=dropped,
                           warnings=[w.split(": ", 1)[-1] for w in warnings], main_class=manifest["main_class"],
                           module=manifest["sources"][0]["module"])
