package sample;

import android.annotation.SuppressLint;
import android.content.Context;
import android.content.res.TypedArray;
import android.database.Cursor;
import android.database.sqlite.SQLiteDatabase;

/* @SuppressLint on a class: it covers every method, and those of the classes nested in it */
@SuppressLint("Recycle")
public class Quiet {
    private static final int[] ATTRS = { 1, 2 };

    /* suppressed */
    int one(Context c) {
        TypedArray a = c.obtainStyledAttributes(ATTRS);
        return a.getInt(0, 0);
    }

    /* suppressed: both of the Cursor's findings (Recycle is Android Lint's Cursor check too) */
    int two(SQLiteDatabase db) {
        Cursor k = db.rawQuery("select 1", null);
        return k.getCount();
    }

    static class Nested {
        /* suppressed, by the class it is nested in */
        int three(Context c) {
            TypedArray a = c.obtainStyledAttributes(ATTRS);
            return a.getInt(0, 0);
        }
    }
}
