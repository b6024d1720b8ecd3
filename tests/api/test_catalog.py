"""One description per transform: the API, the frontend and the CLI read the same catalog."""

import transpile as tp
from transpile import cli
from transpile.api import catalog
from transpile.frontend.hooks import API


def test_every_public_transform_is_in_the_catalog_and_the_frontend_knows_it():
    public = {getattr(tp, kind.name) for kind in catalog.KINDS.values()}
    assert public == catalog.entry_points() == API.makers
    for name in ("grad", "value_and_grad", "vjp", "jvp", "linearize", "jacfwd", "jacrev", "hessian", "vmap", "jit"):
        assert catalog.KINDS[name].entry is getattr(tp, name)


def test_the_cli_writes_what_the_catalog_says():
    parser = cli.make_parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices
    for name in catalog.written():
        kind = catalog.KINDS[name]
        assert kind.subcommand in commands
        if kind.description:
            assert commands[kind.subcommand].description == kind.description
            assert kind.example.startswith(f"transpile {kind.subcommand} ")
    assert catalog.written() == cli.TRANSFORMS
    assert {name for name in catalog.written() if catalog.KINDS[name].takes_primals} == {"vjp", "jvp"}
