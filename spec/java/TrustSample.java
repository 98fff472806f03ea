import java.lang.ref.SoftReference;
import java.lang.ref.WeakReference;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/*
 * The kinds of program users write, with the shapes that broke sift before
 * (spec/trust_spec.lua): a session cache whose class has fields named like
 * sift's methods, a listener list of lambdas, a 200,000-node linked list, a
 * class-loader leak, weak and soft references, 2-D arrays and generated
 * reflection accessors. Dumped under several JVM layouts, each time with
 * the JVM's own GC.class_histogram beside it.
 */
public class TrustSample {
    /* every field named like a method of sift's objects */
    static final class Session {
        long id;
        String kind = "web";
        int size = 3;
        int length = 4;
        byte[] bytes = {1, 2, 3};
        String string = "not the text";
        Object fields;
        String heap = "eu-west";
        int get = 5;
        Object field;
        boolean has_field = true;
        Object elements;
        Object as_class;
        String class_name = "Session";
        boolean is_instance_of;
        Object __index;
        Object __tostring;
        Session(long id) { this.id = id; }
    }

    static final class Node { Node next; int value; }

    /* loaded again by a URLClassLoader nobody keeps: only its instance does */
    public static final class Plugin {
        static final int[] TABLE = new int[256];
        final byte[] state = new byte[4096];
    }

    static final Map<String, Session> SESSIONS = new HashMap<>();
    static final List<Runnable> LISTENERS = new CopyOnWriteArrayList<>();
    static Node LIST;
    static Object PLUGIN;
    static WeakReference<Session> WEAK;
    static SoftReference<byte[]> SOFT;
    static final int[][] GRID = new int[3][5];
    static final Object[][] MATRIX = {{"a", null}, {new Object()}};
    static final long[][] WIDE = new long[2][3];
    static final List<Object> KEEP = new ArrayList<>();

    public static int ping(int x) { return x + 1; }

    public static void main(String[] args) throws Exception {
        for (int i = 0; i < 3; i++) SESSIONS.put("s" + i, new Session(i));
        for (int i = 0; i < 4; i++) { final int k = i; LISTENERS.add(() -> System.out.print(k)); }
        for (int i = 0; i < 200_000; i++) { Node n = new Node(); n.value = i; n.next = LIST; LIST = n; }
        WEAK = new WeakReference<>(SESSIONS.get("s1"));
        SOFT = new SoftReference<>(new byte[100]);
        URL here = TrustSample.class.getProtectionDomain().getCodeSource().getLocation();
        URLClassLoader loader = new URLClassLoader(new URL[] {here}, null);
        PLUGIN = loader.loadClass("TrustSample$Plugin").getDeclaredConstructor().newInstance();
        loader = null;
        Method m = TrustSample.class.getMethod("ping", int.class);
        for (int i = 0; i < 40; i++) m.invoke(null, i);  /* a GeneratedMethodAccessor */
        KEEP.add(m);
        KEEP.add(new Integer[] {1, 2});
        KEEP.add(new char[] {'x'});
        KEEP.add(new boolean[7]);
        KEEP.add(new double[] {1.5});
        System.out.println("ready " + ProcessHandle.current().pid());
        System.out.flush();
        Thread.sleep(300_000);
    }
}
