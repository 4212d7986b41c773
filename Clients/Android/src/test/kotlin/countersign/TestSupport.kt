package countersign

import countersign.client.HttpRequest
import countersign.client.HttpResponse
import countersign.client.HttpTransport
import countersign.core.LenientBase64
import kotlinx.coroutines.sync.Mutex
import kotlinx.coroutines.sync.withLock
import org.json.JSONObject
import java.io.File
import java.nio.file.Files
import java.security.KeyFactory
import java.security.Signature
import java.security.spec.X509EncodedKeySpec

/** A key file in a directory of its own, removed by [close]. */
class KeysOnDisk : AutoCloseable {
    val directory: File = Files.createTempDirectory("countersign-android-keys").toFile()
    val file: File get() = File(directory, "keys.json")

    /** The names of the keys in the file. */
    fun aliases(): Set<String> = JSONObject(file.readText()).keys().asSequence().map { it as String }.toSet()

    override fun close() {
        directory.deleteRecursively()
    }
}

/** Whether [signatureBase64] is a P-256 SHA-256 signature of [message] by the SPKI [publicKeyBase64]. */
fun verifies(publicKeyBase64: String, message: String, signatureBase64: String): Boolean {
    val key = KeyFactory.getInstance("EC").generatePublic(X509EncodedKeySpec(LenientBase64.decode(publicKeyBase64)))
    return Signature.getInstance("SHA256withECDSA").run {
        initVerify(key)
        update(message.toByteArray(Charsets.UTF_8))
        verify(LenientBase64.decode(signatureBase64))
    }
}

/** Answers each request with the next scripted reply and keeps what was sent. */
class ScriptedServer : HttpTransport {
    private val lock = Mutex()
    val requests = mutableListOf<HttpRequest>()
    private val replies = ArrayDeque<HttpResponse>()

    fun reply(status: Int, body: String, headers: Map<String, String> = emptyMap()) {
        replies.addLast(HttpResponse(status, headers.mapKeys { it.key.toLowerCase() }, body.toByteArray()))
    }

    override suspend fun send(request: HttpRequest): HttpResponse = lock.withLock {
        requests.add(request)
        replies.removeFirstOrNull() ?: HttpResponse(500, emptyMap(), ByteArray(0))
    }
}

/** The JSON body of a request. */
val HttpRequest.json: JSONObject get() = JSONObject(String(body!!, Charsets.UTF_8))

/** A small FIFO (Kotlin 1.3's standard library has no ArrayDeque). */
class ArrayDeque<T> {
    private val items = java.util.ArrayDeque<T>()
    fun addLast(item: T) = items.addLast(item)
    fun removeFirstOrNull(): T? = items.pollFirst()
}
