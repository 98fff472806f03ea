--- The resources sift lint checks, as data. A rule names the classes of a
-- resource (internal names, com/foo/Bar), how one is opened, the methods
-- that release it, and whether it is on by default. Add a rule by adding a
-- table here or passing one to `sift.lint.check` (`rules = {myrule = {...}}`).
--
--     {
--       what = "Cursor",                 -- its name in findings
--       default = true,                  -- on unless --rules says otherwise
--       types = {"android/database/Cursor", ...},  -- the resource's classes
--       release = {close = true},        -- the methods that release it (called on it)
--       opens_returned = true,           -- any call returning one of `types` opens one (Cursor: a query)
--       opener_names = {obtainTypedArray = true},  -- a call of one of these names returning one of `types`
--       opens = {"java/io/FileInputStream", ...},  -- classes whose constructor opens one
--       opens_named = {["java/io/PrintWriter"] = true, ...},  -- ...when its first parameter names a file
--       openers = {["java/nio/file/Files.newInputStream"] = true, ...},  -- library methods returning a new one
--       wrappers = {"java/io/BufferedReader", ...},  -- constructors that take ownership of the resource they wrap
--       seed = true,                     -- the two criteria of the Cursor detector (operations and try blocks)
--       unchecked = true,                -- its calls throw RuntimeExceptions only (UNCHECKED_CATCHES take them)
--       accessors = {getCursor = true},  -- methods returning one that is held elsewhere (not opened)
--       android = true,                  -- Android Lint's terms: never-closed only, any argument escapes
--     }
--
-- Types that hold no OS resource (`M.NO_RESOURCE`: in-memory streams) are
-- never opened; neither is anything read from a static field (System.in,
-- out, err) or a parameter: a wrapper around one of those owns nothing.
-- Library methods that close what they are given are `M.CLOSERS`; those
-- that take it over (and give it back) `M.TAKERS`.
-- @module sift.lint.rules

local M = {}

-- the JDK's streams, readers and writers that wrap another and close it when closed
local JDK_WRAPPERS = {
  "java/io/BufferedInputStream", "java/io/BufferedOutputStream", "java/io/BufferedReader", "java/io/BufferedWriter",
  "java/io/InputStreamReader", "java/io/OutputStreamWriter", "java/io/DataInputStream", "java/io/DataOutputStream",
  "java/io/ObjectInputStream", "java/io/ObjectOutputStream", "java/io/PrintWriter", "java/io/PrintStream",
  "java/io/PushbackInputStream", "java/io/PushbackReader", "java/io/LineNumberReader", "java/io/LineNumberInputStream",
  "java/io/FilterInputStream", "java/io/FilterOutputStream", "java/io/FilterReader", "java/io/FilterWriter",
  "java/io/SequenceInputStream", "java/util/Scanner", "java/util/Formatter",
  "java/util/zip/GZIPInputStream", "java/util/zip/GZIPOutputStream", "java/util/zip/ZipInputStream",
  "java/util/zip/ZipOutputStream", "java/util/zip/InflaterInputStream", "java/util/zip/DeflaterOutputStream",
  "java/util/zip/CheckedInputStream", "java/util/zip/CheckedOutputStream", "java/util/jar/JarInputStream",
  "java/util/jar/JarOutputStream", "java/security/DigestInputStream", "java/security/DigestOutputStream",
  "javax/crypto/CipherInputStream", "javax/crypto/CipherOutputStream",
  "org/xml/sax/InputSource",  -- (what an XML parser reads, and closes: CLOSERS)
}

--- Types that hold no OS resource: closing them releases nothing.
M.NO_RESOURCE = {
  ["java/io/ByteArrayInputStream"] = true, ["java/io/ByteArrayOutputStream"] = true,
  ["java/io/StringReader"] = true, ["java/io/StringWriter"] = true, ["java/io/CharArrayReader"] = true,
  ["java/io/CharArrayWriter"] = true, ["java/io/StringBufferInputStream"] = true,
}

--- Library methods that close the resources they are given (owner.name, any
-- descriptor): every argument that is a resource is closed.
M.CLOSERS = {
  ["kotlin/io/CloseableKt.closeFinally"] = true,
  ["kotlin/io/AutoCloseableKt.closeFinally"] = true,
  ["com/google/common/io/Closeables.closeQuietly"] = true,
  ["com/google/common/io/Closeables.close"] = true,
  ["org/apache/commons/io/IOUtils.closeQuietly"] = true,
  ["org/apache/commons/io/IOUtils.close"] = true,
  ["org/apache/commons/compress/utils/IOUtils.closeQuietly"] = true,
  ["org/codehaus/plexus/util/IOUtil.close"] = true,
  ["org/apache/maven/shared/utils/io/IOUtil.close"] = true,
  ["org/apache/tools/ant/util/FileUtils.close"] = true,
  ["org/apache/tools/ant/util/FileUtils.closeQuietly"] = true,
  ["okhttp3/internal/Util.closeQuietly"] = true,
  ["miui/util/IOUtils.closeQuietly"] = true,  -- (MIUI's framework)
  ["org/junit/platform/commons/util/ExceptionUtils.closeQuietly"] = true,
  -- the JDK's XML parsers (Xerces) close the stream they parse when done, on success and on error
  ["javax/xml/parsers/DocumentBuilder.parse"] = true,
  ["javax/xml/parsers/SAXParser.parse"] = true, ["org/xml/sax/XMLReader.parse"] = true,
  -- OSGi: "the Framework must always close the specified InputStream object, even if an exception is thrown"
  ["org/osgi/framework/Bundle.update"] = true,
  ["org/osgi/framework/BundleContext.installBundle"] = true,
  ["org/eclipse/osgi/framework/internal/core/AbstractBundle.update"] = true,
}

--- Calls on a resource that return a part of it: closing either closes
-- both (a socket's streams, a file stream's channel), passing either on
-- passes both.
M.PARTS = {
  ["java/net/Socket.getInputStream"] = true, ["java/net/Socket.getOutputStream"] = true,
  ["java/net/Socket.getChannel"] = true, ["java/io/FileInputStream.getChannel"] = true,
  ["java/io/FileOutputStream.getChannel"] = true, ["java/io/RandomAccessFile.getChannel"] = true,
  ["java/util/stream/Stream.iterator"] = true, ["java/util/stream/BaseStream.iterator"] = true,
}

--- Calls on a resource that do not throw while it is open (they declare
-- no exception and read what is already in memory).
M.QUIET = {
  ["java/util/zip/ZipFile.entries"] = true, ["java/util/zip/ZipFile.getEntry"] = true,
  ["java/util/zip/ZipFile.size"] = true, ["java/util/zip/ZipFile.getName"] = true,
  ["java/util/jar/JarFile.entries"] = true, ["java/util/jar/JarFile.getEntry"] = true,
  ["java/util/jar/JarFile.getJarEntry"] = true,
}
-- (a stream's intermediate operations read nothing yet: only a terminal
-- one, forEach or collect, reads, and may throw UncheckedIOException)
for _, owner in ipairs { "java/util/stream/Stream", "java/util/stream/BaseStream" } do
  for _, op in ipairs { "filter", "map", "mapToInt", "mapToLong", "mapToObj", "flatMap", "distinct", "sorted", "peek",
      "limit", "skip", "iterator", "spliterator", "onClose", "parallel", "sequential", "unordered", "boxed" } do
    M.QUIET[owner .. "." .. op] = true
  end
end

--- Classes none of whose methods throws a checked exception (collections,
-- strings; PrintStream and PrintWriter, which keep an I/O error for
-- checkError; InputSource's setters): a call on one is taken not to throw.
M.QUIET_CLASSES = {
  ["java/lang/StringBuilder"] = true, ["java/lang/StringBuffer"] = true, ["java/lang/String"] = true,
  ["java/lang/Object"] = true, ["java/lang/Integer"] = true, ["java/lang/Long"] = true, ["java/lang/Boolean"] = true,
  ["java/lang/Math"] = true, ["java/util/Objects"] = true, ["java/util/Hashtable"] = true, ["java/util/HashMap"] = true,
  ["java/util/Map"] = true, ["java/util/List"] = true, ["java/util/ArrayList"] = true, ["java/util/Vector"] = true,
  ["java/util/Set"] = true, ["java/util/HashSet"] = true, ["java/util/Collection"] = true,
  ["java/util/LinkedList"] = true, ["java/util/TreeMap"] = true, ["java/util/Stack"] = true,
  ["java/io/PrintStream"] = true, ["java/io/PrintWriter"] = true, ["org/xml/sax/InputSource"] = true,
}

--- Exceptions only opening a resource throws: a catch of one of them does
-- not catch what a call on an open resource throws (a read error).
M.OPEN_FAILURES = {
  ["java/io/FileNotFoundException"] = true, ["java/net/MalformedURLException"] = true,
  ["java/net/UnknownHostException"] = true, ["java/nio/file/NoSuchFileException"] = true,
}

--- Library methods that take over the resources they are given and return
-- them (Guava's Closer closes all it registered when it is closed).
M.TAKERS = {
  ["com/google/common/io/Closer.register"] = true,
}

--- Catches that take every exception a call on a resource of a rule with
-- `unchecked` throws (Android's resources declare none: what they throw is
-- a RuntimeException); the handlers after one see only Errors, which leave
-- no finding (an Error, like an OutOfMemoryError, is not a leak's cause).
M.UNCHECKED_CATCHES = { ["java/lang/RuntimeException"] = true, ["java/lang/Exception"] = true,
  ["java/lang/Throwable"] = true }

M.cursor = {
  what = "Cursor",
  default = true,
  seed = true,
  unchecked = true,
  -- (CursorAdapter's, CursorWrapper's: the one they hold; swapCursor gives back the old one, the Loader's)
  accessors = { getCursor = true, getWrappedCursor = true, swapCursor = true },
  types = { "android/database/Cursor", "android/database/CrossProcessCursor", "android/database/AbstractCursor",
    "android/database/AbstractWindowedCursor", "android/database/sqlite/SQLiteCursor",
    "android/database/CursorWrapper", "android/database/MatrixCursor", "android/database/MergeCursor" },
  opens_returned = true,
  opens = { "android/database/sqlite/SQLiteCursor", "android/database/MergeCursor" },  -- (a MatrixCursor: rows in memory)
  wrappers = { "android/database/CursorWrapper" },
  release = { close = true },
}

M.closeable = {
  what = "Closeable",
  types = { "java/io/Closeable", "java/lang/AutoCloseable", "java/io/InputStream", "java/io/OutputStream",
    "java/io/Reader", "java/io/Writer", "java/io/FileInputStream", "java/io/FileOutputStream",
    "java/io/RandomAccessFile", "java/io/BufferedReader", "java/io/BufferedWriter", "java/io/InputStreamReader",
    "java/io/OutputStreamWriter", "java/io/FileReader", "java/io/FileWriter", "java/util/zip/ZipFile",
    "java/util/jar/JarFile", "java/nio/channels/FileChannel", "java/net/Socket", "java/net/ServerSocket" },
  opens = { "java/io/FileInputStream", "java/io/FileOutputStream", "java/io/RandomAccessFile", "java/io/FileReader",
    "java/io/FileWriter", "java/util/zip/ZipFile", "java/util/jar/JarFile", "java/net/Socket", "java/net/ServerSocket",
    "java/net/DatagramSocket", "java/net/MulticastSocket", "java/util/logging/FileHandler" },
  -- wrappers that open a file themselves when given its name or File (Scanner's String is the text to scan)
  opens_named = { ["java/io/PrintWriter"] = { "java/lang/String", "java/io/File" },
    ["java/io/PrintStream"] = { "java/lang/String", "java/io/File" },
    ["java/util/Formatter"] = { "java/lang/String", "java/io/File" },
    ["java/util/Scanner"] = { "java/io/File", "java/nio/file/Path" } },
  openers = {
    ["java/nio/file/Files.newInputStream"] = true, ["java/nio/file/Files.newOutputStream"] = true,
    ["java/nio/file/Files.newBufferedReader"] = true, ["java/nio/file/Files.newBufferedWriter"] = true,
    ["java/nio/file/Files.newByteChannel"] = true, ["java/nio/file/Files.newDirectoryStream"] = true,
    ["java/nio/file/Files.lines"] = true, ["java/nio/file/Files.list"] = true, ["java/nio/file/Files.walk"] = true,
    ["java/nio/file/Files.find"] = true, ["java/net/URL.openStream"] = true,
    ["java/net/URLConnection.getInputStream"] = true, ["java/net/URLConnection.getOutputStream"] = true,
    ["java/lang/Class.getResourceAsStream"] = true, ["java/lang/ClassLoader.getResourceAsStream"] = true,
    ["java/lang/ClassLoader.getSystemResourceAsStream"] = true, ["java/net/ServerSocket.accept"] = true,
    ["java/nio/channels/FileChannel.open"] = true, ["java/nio/channels/SocketChannel.open"] = true,
    ["java/nio/channels/ServerSocketChannel.open"] = true, ["java/nio/channels/Selector.open"] = true,
  },
  wrappers = JDK_WRAPPERS,
  release = { close = true },
}

-- Android Lint's Recycle rules (its CleanupDetector): a resource one of
-- these calls returns must be released in the method, unless it escapes
-- there: returned, stored in a field, or given to any call as an argument
-- (`escapes_args`; `not_escapes`: calls that take it and keep nothing).
-- Released or escaping on any path is enough (`android`: only
-- never-closed is reported, no try block asked for; `--strict` judges it
-- as every rule, the try-based criteria included).
M.typedarray = {
  what = "TypedArray",
  unchecked = true,
  android = true,
  types = { "android/content/res/TypedArray" },
  -- (Context, Resources, Theme, or an app's subclass: a call of these names returning a TypedArray)
  opener_names = { obtainStyledAttributes = true, obtainAttributes = true, obtainTypedArray = true },
  release = { recycle = true },
}

M.velocitytracker = {
  what = "VelocityTracker",
  unchecked = true,
  android = true,
  types = { "android/view/VelocityTracker" },
  openers = { ["android/view/VelocityTracker.obtain"] = true },
  release = { recycle = true },
}

M.motionevent = {
  what = "MotionEvent",
  unchecked = true,
  android = true,
  types = { "android/view/MotionEvent" },
  openers = { ["android/view/MotionEvent.obtain"] = true, ["android/view/MotionEvent.obtainNoHistory"] = true },
  not_escapes = { ["android/view/MotionEvent.obtain"] = true },  -- (a copy made of it: it is still this method's)
  release = { recycle = true },
}

M.parcel = {
  what = "Parcel",
  unchecked = true,
  android = true,
  types = { "android/os/Parcel" },
  openers = { ["android/os/Parcel.obtain"] = true },
  release = { recycle = true },
}

M.contentproviderclient = {
  what = "ContentProviderClient",
  unchecked = true,
  android = true,
  types = { "android/content/ContentProviderClient" },
  openers = { ["android/content/ContentResolver.acquireContentProviderClient"] = true,
    ["android/content/ContentResolver.acquireUnstableContentProviderClient"] = true },
  release = { release = true, close = true },
}

M.parcelfiledescriptor = {
  what = "ParcelFileDescriptor",
  types = { "android/os/ParcelFileDescriptor" },
  opens_returned = true,
  release = { close = true, detachFd = true },
}

--- The rules by name (what `--rules` picks from).
M.all = { cursor = M.cursor, closeable = M.closeable, typedarray = M.typedarray,
  parcelfiledescriptor = M.parcelfiledescriptor, velocitytracker = M.velocitytracker, motionevent = M.motionevent,
  parcel = M.parcel, contentproviderclient = M.contentproviderclient }

--- Android Lint's Recycle rules, by the name `--rules android` stands for.
M.android = { "typedarray", "velocitytracker", "motionevent", "parcel", "contentproviderclient", "cursor" }

return M
