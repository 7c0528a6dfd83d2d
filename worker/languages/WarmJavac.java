// javac kept running for worker/languages/warm.py: it compiles program after program in one JVM, so that a
// compile costs javac's work (tens of milliseconds, once warm) rather than a JVM's start and a cold javac.
//
// On stdin, each request: a big-endian int, the number of words, then each word as an int (its length in
// bytes) and its UTF-8 bytes: the program's directory, then javac's arguments (its files' paths absolute:
// a JVM's working directory is its start's). On stdout, first one byte (1: javac is loaded, the requests
// may come), then each answer: an int, javac's exit status, and an int and that many bytes, all javac said
// (its diagnostics, which a javac command writes to stderr). It ends at the end of stdin.
//
// Nothing else may reach stdout: System.out is stderr from the start. Nothing of the programs' runs here:
// warm.py asks for no annotation processing (-proc:none).

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.FileOutputStream;
import java.io.FileDescriptor;
import java.io.IOException;
import java.util.Arrays;
import java.nio.charset.StandardCharsets;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;

public class WarmJavac {
    public static void main(String[] arguments) throws IOException {
        DataOutputStream answers = new DataOutputStream(new BufferedOutputStream(new FileOutputStream(FileDescriptor.out)));
        System.setOut(System.err);
        DataInputStream requests = new DataInputStream(new BufferedInputStream(System.in));
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
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
            int status = javac.run(null, said, said, Arrays.copyOfRange(words, 1, count));
            byte[] text = said.toByteArray();
            answers.writeInt(status);
            answers.writeInt(text.length);
            answers.write(text);
            answers.flush();
        }
    }
}
