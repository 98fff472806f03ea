--- The resources sift lint checks, as data: a rule names the classes of
-- a resource (internal names, com/foo/Bar), the methods that release it,
-- and whether it is on by default. Add a rule by adding a table here or
-- passing one to `sift.lint.check` (`rules = {myrule = {...}}`).
--
--     {
--       types = {"android/database/Cursor", ...},  -- a call on one of these is an operation
--       release = {close = true},                    -- ...except these, which release it
--       default = true,                              -- on unless --rules says otherwise
--       what = "Cursor",                             -- its name in findings
--     }
-- @module sift.lint.rules

return {
  cursor = {
    what = "Cursor",
    default = true,
    types = { "android/database/Cursor", "android/database/CrossProcessCursor", "android/database/AbstractCursor",
      "android/database/AbstractWindowedCursor", "android/database/sqlite/SQLiteCursor",
      "android/database/CursorWrapper", "android/database/MatrixCursor", "android/database/MergeCursor" },
    release = { close = true },
  },
  closeable = {
    what = "Closeable",
    types = { "java/io/Closeable", "java/lang/AutoCloseable", "java/io/InputStream", "java/io/OutputStream",
      "java/io/Reader", "java/io/Writer", "java/io/FileInputStream", "java/io/FileOutputStream",
      "java/io/RandomAccessFile", "java/io/BufferedReader", "java/io/BufferedWriter", "java/io/InputStreamReader",
      "java/io/OutputStreamWriter", "java/io/FileReader", "java/io/FileWriter", "java/util/zip/ZipFile",
      "java/util/jar/JarFile", "java/nio/channels/FileChannel", "java/net/Socket", "java/net/ServerSocket" },
    release = { close = true },
  },
  typedarray = {
    what = "TypedArray",
    types = { "android/content/res/TypedArray" },
    release = { recycle = true },
  },
  parcelfiledescriptor = {
    what = "ParcelFileDescriptor",
    types = { "android/os/ParcelFileDescriptor" },
    release = { close = true, detachFd = true },
  },
}
