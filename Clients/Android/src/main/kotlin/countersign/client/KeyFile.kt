package countersign.client

import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.sync.Mutex
import kotlinx.coroutines.sync.withLock
import kotlinx.coroutines.withContext
import org.json.JSONObject
import java.io.File
import java.io.FileOutputStream
import java.io.IOException
import java.nio.file.Files
import java.nio.file.attribute.PosixFilePermissions

/**
 * A small JSON file of named strings (key blobs, or keystore aliases), readable and writable by its owner
 * only. Every change writes a new file beside it and renames it into place, so a crash mid-write leaves
 * the old file or the new one, never one with some keys or none.
 */
class KeyFile(val file: File) {
    private val lock = Mutex()

    suspend fun read(name: String): String? = lock.withLock { io { load().opt(name) as? String } }

    /** Sets [name] to [value], or removes it when [value] is null. */
    suspend fun write(name: String, value: String?) = lock.withLock {
        io {
            val entries = load()
            if (value == null) entries.remove(name) else entries.put(name, value)
            save(entries)
        }
    }

    /** Renames the entries named by [newNames]' keys to its values, in one write; throws KeyNotFound, changing nothing, when one is absent. */
    suspend fun move(newNames: Map<String, String>) = lock.withLock {
        io {
            val entries = load()
            for ((name, newName) in newNames.toSortedMap()) {
                val value = entries.remove(name) as? String ?: throw CountersignException.KeyNotFound(name)
                entries.put(newName, value)
            }
            save(entries)
        }
    }

    /** The values of those of [names] that are present (the Android store reads what a move replaces, to delete those keys after it). */
    suspend fun valuesOf(names: Collection<String>): Map<String, String> = lock.withLock {
        io {
            val entries = load()
            names.mapNotNull { name -> (entries.opt(name) as? String)?.let { name to it } }.toMap()
        }
    }

    private suspend fun <T> io(block: () -> T): T = withContext(Dispatchers.IO) { block() }

    private fun load(): JSONObject = if (file.exists()) JSONObject(file.readText(Charsets.UTF_8)) else JSONObject()

    private fun save(entries: JSONObject) {
        file.absoluteFile.parentFile?.mkdirs()
        val next = File(file.path + ".next")
        next.delete()
        createOwnerOnly(next)
        FileOutputStream(next).use { stream ->
            stream.write(entries.toString().toByteArray(Charsets.UTF_8))
            stream.fd.sync()
        }
        if (!next.renameTo(file)) throw IOException("cannot replace ${file.path}")
    }

    /**
     * Creates [file] with mode 0600 from the start where the file system has POSIX permissions (the JVM
     * on Linux and macOS), so no other user can open it even for an instant; elsewhere (an app's private
     * directory on Android, which no other app can enter) owner-only through `java.io.File`.
     */
    private fun createOwnerOnly(file: File) {
        val posix = try {
            file.toPath().fileSystem.supportedFileAttributeViews().contains("posix")
        } catch (unavailable: LinkageError) {
            false  // java.nio.file arrived in Android API 26
        }
        if (posix) {
            Files.createFile(file.toPath(), PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")))
        } else {
            if (!file.createNewFile()) throw IOException("cannot create ${file.path}")
            file.setReadable(false, false); file.setReadable(true, true)
            file.setWritable(false, false); file.setWritable(true, true)
        }
    }
}
