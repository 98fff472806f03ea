import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/*
 * Planted waste for spec/waste_spec.lua:
 * - 500 copies of "duplicate-me", each with its own array (new String of a
 *   char[]), beside the literal: 501 Strings, 501 arrays;
 * - 300 copies of "shared-copy" made with new String(s): they share the
 *   literal's array, so 301 Strings and one array;
 * - duplicate primitive arrays not behind strings: 40 int[100], 30
 *   byte[64] and 25 long[10] of the same (non-zero) content each;
 * - a HashMap sized for 1,024 holding 3 entries, 100 byte[1000] never
 *   written, and 10,000 Integers holding 10 values.
 */
public class WasteSample {
    static final List<String> COPIES = new ArrayList<>();
    static final List<String> SHARED = new ArrayList<>();
    static final List<Object> ARRAYS = new ArrayList<>();
    static final Map<String, String> SPARSE = new HashMap<>(1024);
    static final List<byte[]> BUFFERS = new ArrayList<>();
    static final List<Integer> BOXES = new ArrayList<>();

    public static void main(String[] args) throws Exception {
        for (int i = 0; i < 500; i++) COPIES.add(new String("duplicate-me".toCharArray()));
        String shared = "shared-copy";
        for (int i = 0; i < 300; i++) SHARED.add(new String(shared));
        for (int i = 0; i < 40; i++) {
            int[] a = new int[100];
            for (int k = 0; k < a.length; k++) a[k] = 7 * k + 3;
            ARRAYS.add(a);
        }
        for (int i = 0; i < 30; i++) {
            byte[] b = new byte[64];
            for (int k = 0; k < b.length; k++) b[k] = (byte) (k * 5 + 1);
            ARRAYS.add(b);
        }
        for (int i = 0; i < 25; i++) {
            long[] l = new long[10];
            for (int k = 0; k < l.length; k++) l[k] = 1000003L * (k + 1);
            ARRAYS.add(l);
        }
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
