"""Verilog (SystemVerilog): Icarus Verilog, as SandboxFusion runs it after VerilogEval: `iverilog -Wall
-Winfloop -Wno-timescale -g2012 -s tb -o test.vvp FILE` (the program holds its testbench, module `tb`),
then `vvp -n test.vvp`. A compile error is syntax_error; the run passes by exiting with status 0 (a
testbench's `$fatal` exits with 1); VerilogEval counts its mismatches in what the testbench prints."""

from codeexec.worker.languages.language import Language, RunCode, SelfTest

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
SELF_TEST = SelfTest(
    passes='module tb; initial begin if (1 + 1 != 2) $fatal(1, "no"); $finish; end endmodule\n',
    fails='module tb; initial begin if (1 + 1 != 3) $fatal(1, "no"); $finish; end endmodule\n',
    fails_as="error",
    broken="module tb; initial begin x = ; end endmodule\n",
)
RUN_CODE = {
    "verilog": RunCode(
        "",
        echo=(
            "module tb;\n"
            "  integer n, r;\n"
            "  initial begin\n"
            '    r = $fscanf(32\'h8000_0000, "%d", n);\n'
            '    $display("%0d %0d", n, n + 1);\n'
            "    $finish;\n"
            "  end\n"
            "endmodule\n"
        ),
        failing='module tb; initial begin if (1 != 2) $fatal(1, "assertion failed"); $finish; end endmodule\n',
    ),
}
