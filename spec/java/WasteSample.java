import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/*
 * Planted waste for spec/waste_spec.lua: 500 copies of one string (each
 * with its own array), a HashMap sized for 1,024 holding 3 entries, 100
 * byte[1000] never written, and 10,000 Integers holding 10 values.
 */
public class WasteSample {
    static final List<String> COPIES = new ArrayList<>();
    static final Map<String, String> SPARSE = new HashMap<>(1024);
    static final List<byte[]> BUFFERS = new ArrayList<>();
    static final List<Integer> BOXES = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        for (int i = 0; i < 500; i++) COPIES.add(new String("duplicate-me".toCharArray()));
        SPARSE.put("a", "1");
        SPARSE.put("b", "2");
        SPARSE.put("c", "3");
        for (int i = 0; i < 100; i++) BUFFERS.add(new byte[1000]);
        for (int i = 0; i < 10000; i++) BOXES.add(Integer.valueOf(1000 + i % 10));
        System.out.println("ready " + ProcessHandle.current().pid());
        System.out.flush();
        Thread.sleep(600000);
    }
}
