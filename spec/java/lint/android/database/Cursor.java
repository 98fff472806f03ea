package android.database;

/* A stub of Android's Cursor for the lint spec: the methods the samples call. */
public interface Cursor extends java.io.Closeable {
    boolean moveToFirst();
    boolean moveToNext();
    int getCount();
    String getString(int column);
    void close();
}
