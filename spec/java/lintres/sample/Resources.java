package sample;

import java.io.BufferedInputStream;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.FileReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.StringReader;

/*
 * The resource model's shapes for the closeable rule: each method's name
 * says what sift lint must report on it (spec/lint_spec.lua lists them);
 * "fine" ones must report nothing. lib.Closing and Commons IO's IOUtils
 * come from spec/java/lintlib, which is not linted (--classpath reads it).
 */
public class Resources {
    private InputStream kept;

    /* fine: the wrapper is closed, which closes the stream it wraps */
    static String wrapperClosed(File f) throws IOException {
        BufferedReader r = new BufferedReader(new InputStreamReader(new FileInputStream(f), "UTF-8"));
        try {
            return r.readLine();
        } finally {
            r.close();
        }
    }

    /* fine: try-with-resources on the wrapper */
    static String wrapperTwr(File f) throws IOException {
        try (BufferedReader r = new BufferedReader(new FileReader(f))) {
            return r.readLine();
        }
    }

    /* fine: a factory: the caller owns the wrapper it returns */
    static InputStream open(File f) throws IOException {
        return new BufferedInputStream(new FileInputStream(f));
    }

    /* never-closed: what the factory opened, never closed */
    static int factoryNeverClosed(File f) throws IOException {
        InputStream in = open(f);
        return in.read();
    }

    /* fine: an accessor returns the field it keeps: opening nothing */
    InputStream getStream() {
        return kept;
    }

    int accessorUsed() throws IOException {
        return getStream().read();
    }

    /* fine: in-memory streams hold no OS resource; System.out is not ours */
    static String inMemory(String s) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        PrintWriter w = new PrintWriter(System.out);
        w.print(new BufferedReader(new StringReader(s)).readLine());
        bytes.write(1);
        return bytes.toString();
    }

    /* fine: the caller's own stream, wrapped and not closed */
    static int callersStream(InputStream in) throws IOException {
        return new BufferedInputStream(in).read();
    }

    /* fine: closed in a finally under a null check (the stream may not have been opened) */
    static int nullChecked(File f) throws IOException {
        InputStream in = null;
        try {
            in = new FileInputStream(f);
            return in.read();
        } finally {
            if (in != null) in.close();
        }
    }

    /* fine: closed by a helper of this class, which closes through another */
    static int helperOneDeeper(File f) throws IOException {
        InputStream in = new FileInputStream(f);
        try {
            return in.read();
        } finally {
            closeAll(in);
        }
    }

    static void closeAll(InputStream in) {
        quietly(in);
    }

    static void quietly(InputStream in) {
        try {
            if (in != null) in.close();
        } catch (IOException e) {
            // ignored
        }
    }

    /* fine: Commons IO's closeQuietly, known as data */
    static int knownCloser(File f) throws IOException {
        InputStream in = new FileInputStream(f);
        try {
            return in.read();
        } finally {
            org.apache.commons.io.IOUtils.closeQuietly(in);
        }
    }

    /* fine with --classpath (lib.Closing closes it); never-closed without */
    static int closedInOtherJar(File f) throws IOException {
        InputStream in = new FileInputStream(f);
        try {
            return in.read();
        } finally {
            lib.Closing.shut(in);
        }
    }

    /* not-closed-on-exception: the output stream is closed on the normal path only */
    static void twoResources(File a, File b) throws IOException {
        InputStream in = new FileInputStream(a);
        OutputStream out = new FileOutputStream(b);
        try {
            out.write(in.read());
        } finally {
            in.close();
        }
        out.close();
    }

    /* never-closed: of two streams, the second is never closed */
    static int secondNeverClosed(File a, File b) throws IOException {
        InputStream in = new FileInputStream(a);
        InputStream other = new FileInputStream(b);
        try {
            return in.read() + other.read();
        } finally {
            in.close();
        }
    }

    /* not-closed-on-path: closed on one branch only */
    static int closedOnOneBranch(File f, boolean done) throws IOException {
        InputStream in = new FileInputStream(f);
        int b = in.read();
        if (done) in.close();
        return b;
    }

    /* not-closed-on-exception: stored in a field after a call that can throw */
    void storedAfterThrow(File f) throws IOException {
        InputStream in = new FileInputStream(f);
        in.skip(1);
        kept = in;
    }

    /* fine: stored in a field at once */
    void storedAtOnce(File f) throws IOException {
        kept = new FileInputStream(f);
    }
}
