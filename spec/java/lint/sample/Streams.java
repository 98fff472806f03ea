package sample;

import java.io.FileInputStream;
import java.io.IOException;
import java.io.InputStream;

/* Streams for the closeable rule (and FindBugs's OS_OPEN_STREAM). */
public class Streams {
    /* op-outside-try and never-closed: read, and never closed */
    static int leaks(String path) throws IOException {
        InputStream in = new FileInputStream(path);
        return in.read();
    }

    /* fine: try-with-resources */
    static int closes(String path) throws IOException {
        try (InputStream in = new FileInputStream(path)) {
            return in.read();
        }
    }

    /* op-outside-try: closed, but not when read throws */
    static int closesUnlessThrown(String path) throws IOException {
        InputStream in = new FileInputStream(path);
        int b = in.read();
        in.close();
        return b;
    }
}
