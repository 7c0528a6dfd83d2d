// A JVM compiler kept running for worker/compilers/persistent.py, named by the first argument: javac ("javax.tools",
// the JDK's compiler API) or scalac ("scala.tools.nsc": scala.tools.nsc.Main, as its command runs it). It compiles program after
// program in one JVM, so that a compile costs the compiler's work once warm rather than a JVM's start and a
// cold compiler: each compile is the compiler's own entry point with the command's arguments.
//
// On stdin, each request: a big-endian int, the number of words, then each word as an int (its length in
// bytes) and its UTF-8 bytes: the program's directory, then the compiler's arguments (its files' paths
// absolute: a JVM's working directory is its start's). On stdout, first one byte (1: the compiler is
// loaded, the requests may come), then each answer: an int, the exit status its command would have, and an
// int and that many bytes, all the compiler said (its diagnostics, which its command writes to stderr). It
// ends at the end of stdin.
//
// Nothing else may reach stdout: System.out is stderr from the start. Nothing of the programs' runs here:
// warm.py asks javac for no annotation processing (-proc:none), and scalac runs no macro of a program's own
// (a macro must be compiled before the program that uses it).

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

public class WarmCompiler {
    interface Compiler {
        int compile(String[] arguments, ByteArrayOutputStream said) throws Exception;
    }

    static Compiler javac() {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        return (arguments, said) -> javac.run(null, said, said, arguments);
    }

    // scalac's command: scala.tools.nsc.Main.main, which exits 1 where its reporter has errors, else 0. Its
    // ConsoleReporter, made afresh by each process(), writes to scala.Console's err as it is then.
    static Compiler scalac() throws Exception {
        Class<?> main = Class.forName("scala.tools.nsc.Main");
        Method process = main.getMethod("process", String[].class);
        Method reporter = main.getMethod("reporter");
        Method setErr = Class.forName("scala.Console").getMethod("setErr", PrintStream.class);
        return (arguments, said) -> {
            PrintStream into = new PrintStream(said, true, StandardCharsets.UTF_8);
            setErr.invoke(null, into);
            try {
                process.invoke(null, (Object) arguments);
            } finally {
                setErr.invoke(null, System.err);
                into.flush();
            }
            Object found = reporter.invoke(null);
            boolean errors = (Boolean) found.getClass().getMethod("hasErrors").invoke(found);
            return errors ? 1 : 0;
        };
    }

    public static void main(String[] given) throws Exception {
        DataOutputStream answers = new DataOutputStream(new BufferedOutputStream(new FileOutputStream(FileDescriptor.out)));
        System.setOut(System.err);
        DataInputStream requests = new DataInputStream(new BufferedInputStream(System.in));
        Compiler compiler;
        switch (given[0]) {
            case "javax.tools": compiler = javac(); break;
            case "scala.tools.nsc": compiler = scalac(); break;
            default: throw new IllegalArgumentException("no compiler called " + given[0]);
        }
        answers.writeByte(1);
        answers.flush();
        while (true) {
            int count;
            try {
                count = requests.readInt();
            } catch (EOFException end) {
                return;
            }
            String[] words = new String[count];
            for (int i = 0; i < count; i++) {
                byte[] word = new byte[requests.readInt()];
                requests.readFully(word);
                words[i] = new String(word, StandardCharsets.UTF_8);
            }
            ByteArrayOutputStream said = new ByteArrayOutputStream();
            int status;
            try {
                status = compiler.compile(Arrays.copyOfRange(words, 1, count), said);
            } catch (Throwable failed) {  // the compiler's own failure: not a verdict on the program
                status = 99;
            }
            byte[] text = said.toByteArray();
            answers.writeInt(status);
            answers.writeInt(text.length);
            answers.write(text);
            answers.flush();
        }
    }
}
