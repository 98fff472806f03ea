package lib;

import java.io.Closeable;
import java.io.IOException;

/* A closing helper in another jar: sift lint --classpath reads what it does. */
public final class Closing {
    private Closing() {}

    public static void shut(Closeable c) {
        if (c == null) return;
        try {
            c.close();
        } catch (IOException e) {
            // ignored
        }
    }
}
