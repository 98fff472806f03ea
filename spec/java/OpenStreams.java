import java.io.File;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;

/*
 * Streams left open, for the unclosed-resources finder of sift leaks: two
 * FileInputStreams a static list keeps, one FileOutputStream a static field
 * keeps, and a closed stream that must not be reported.
 */
public class OpenStreams {
    static final List<InputStream> OPEN = new ArrayList<>();
    static FileOutputStream log;
    static FileInputStream closedOne;

    public static void main(String[] args) throws Exception {
        File f = File.createTempFile("sift", ".txt");
        f.deleteOnExit();
        OPEN.add(new FileInputStream(f));
        OPEN.add(new FileInputStream(f));
        log = new FileOutputStream(f, true);
        closedOne = new FileInputStream(f);
        closedOne.close();
        System.out.println("ready " + ProcessHandle.current().pid());
        System.out.flush();
        Thread.sleep(600000);
    }
}
