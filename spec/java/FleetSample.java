// A heap big enough that analysing it takes a moment (for the fleet spec's
// worker killed mid-job): -Dobjects=N small objects held by a static list.
import java.util.ArrayList;
import java.util.List;

public class FleetSample {
    static final List<int[]> HELD = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        int n = Integer.getInteger("objects", 1000000);
        for (int i = 0; i < n; i++) HELD.add(new int[] { i });
        System.out.println("ready " + ProcessHandle.current().pid());
        System.out.flush();
        Thread.sleep(600000);
    }
}
