"""The subcommands of `jspgfn` outside the subpackages, one module per family; each module's
add_subcommands(sub) registers its parsers (as gflownet/cli.py, realdata/cli.py and report/cli.py do)."""
