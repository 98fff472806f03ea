import java.net.URL;
import java.net.URLClassLoader;
import java.util.concurrent.CountDownLatch;

/*
 * Planted owners for spec/census_spec.lua: a thread named "holder" whose
 * run() keeps a 5,000,000-byte array in a local variable, and a child-first
 * class loader that defines CensusSample$Payload a second time (the
 * application loader defines it too).
 */
public class CensusSample {
    public static class Payload { public Payload() {} final int[] data = new int[100]; }

    static class ChildFirst extends URLClassLoader {
        ChildFirst(URL[] urls) { super("child-first", urls, CensusSample.class.getClassLoader()); }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            synchronized (getClassLoadingLock(name)) {
                Class<?> c = findLoadedClass(name);
                if (c == null && name.equals("CensusSample$Payload")) c = findClass(name);
                return c != null ? c : super.loadClass(name, resolve);
            }
        }
    }

    static Object own = new Payload();
    static Object other;
    static ClassLoader loader;

    public static void main(String[] args) throws Exception {
        URL here = CensusSample.class.getProtectionDomain().getCodeSource().getLocation();
        loader = new ChildFirst(new URL[] { here });
        other = loader.loadClass("CensusSample$Payload").getDeclaredConstructor().newInstance();
        CountDownLatch ready = new CountDownLatch(1);
        Thread holder = new Thread(() -> {
            byte[] big = new byte[5_000_000];
            big[0] = 1;
            ready.countDown();
            try { Thread.sleep(600_000); } catch (InterruptedException e) { }
            System.out.println(big.length);
        }, "holder");
        holder.setDaemon(true);
        holder.start();
        ready.await();
        System.out.println("ready " + ProcessHandle.current().pid());
        System.out.flush();
        Thread.sleep(600_000);
    }
}
