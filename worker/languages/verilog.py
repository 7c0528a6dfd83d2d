"""Verilog (SystemVerilog): Icarus Verilog, as SandboxFusion runs it after VerilogEval: `iverilog -Wall
-Winfloop -Wno-timescale -g2012 -s tb -o test.vvp FILE` (the program holds its testbench, module `tb`),
then `vvp -n test.vvp`. A compile error is syntax_error; the run passes by exiting with status 0 (a
testbench's `$fatal` exits with 1); VerilogEval counts its mismatches in what the testbench prints."""

from codeexec.worker.languages.language import Language

LANGUAGE = Language(
    name="verilog",
    title="Verilog",
    aliases=("verilog", "sv", "systemverilog"),
    tools=("iverilog", "vvp"),
    package="iverilog",
    file="main.sv",
    compile=(("iverilog", "-Wall", "-Winfloop", "-Wno-timescale", "-g2012", "-s", "tb", "-o", "test.vvp", "{file}"),),
    run=("vvp", "-n", "test.vvp"),
    artifacts=("test.vvp",),
    reads=("/usr/lib/x86_64-linux-gnu/ivl",),
    version=("-V",),
)
