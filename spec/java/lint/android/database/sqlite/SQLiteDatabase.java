package android.database.sqlite;

import android.database.Cursor;

/* A stub of Android's SQLiteDatabase for the lint spec: what opens Cursors. */
public class SQLiteDatabase {
    public Cursor rawQuery(String sql, String[] args) { return null; }
    public Cursor query(String table, String[] columns) { return null; }
}
