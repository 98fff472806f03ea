import java.io.File;
import java.util.ArrayList;
import java.util.List;

/*
 * Heap growth for spec/growth_spec.lua: each time the file DIR/go-N
 * appears, one iteration runs, then DIR/done-N is made. With mode "leak"
 * an iteration keeps 100 more Leaked objects in a static list; with
 * "churn" it makes 10,000 objects, keeps the newest 100 and drops the rest.
 */
public class GrowthSample {
    static final class Payload { final long value; Payload(long v) { value = v; } }
    // The payload is an array of the program's own class: a long[] count
    // also moves with the JDK's own arrays (the attach machinery's among them).
    static final class Leaked { final Payload[] payload = { new Payload(1) }; final int step; Leaked(int s) { step = s; } }
    static final class Churned { final int n; Churned(int n) { this.n = n; } }

    static final List<Leaked> LEAKS = new ArrayList<>();
    static List<Churned> recent = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        File dir = new File(args[0]);
        boolean leak = args[1].equals("leak");
        System.out.println("ready " + ProcessHandle.current().pid());
        System.out.flush();
        for (int step = 1; ; step++) {
            File go = new File(dir, "go-" + step);
            while (!go.exists()) Thread.sleep(5);
            if (leak) {
                for (int i = 0; i < 100; i++) LEAKS.add(new Leaked(step));
            } else {
                List<Churned> all = new ArrayList<>();
                for (int i = 0; i < 10000; i++) all.add(new Churned(i));
                recent = new ArrayList<>(all.subList(all.size() - 100, all.size()));
            }
            new File(dir, "done-" + step).createNewFile();
        }
    }
}
