package countersign.client

import kotlinx.coroutines.Dispatchers
import kotlinx.coroutines.withContext
import java.io.InputStream
import java.net.HttpURLConnection
import java.net.URL

/** One HTTP request as the SDK makes it. */
class HttpRequest(
    val method: String,
    val url: String,
    val headers: Map<String, String>,
    val body: ByteArray?,
    /** How long to wait for the answer, in milliseconds (an inbox long-poll waits longer). */
    val timeoutMillis: Int
)

/** One HTTP answer: status, headers (names in lower case) and body. */
class HttpResponse(val status: Int, val headers: Map<String, String>, val body: ByteArray) {
    fun header(name: String): String? = headers[name.toLowerCase(java.util.Locale.ROOT)]
}

/**
 * One HTTP exchange, so the SDK can run over `HttpURLConnection` (the default) or whatever the app
 * already uses (OkHttp, say). A network failure is thrown; any HTTP status is an answer.
 */
interface HttpTransport {
    suspend fun send(request: HttpRequest): HttpResponse
}

/** The default transport: `HttpURLConnection`, run on the IO dispatcher. */
class HttpUrlConnectionTransport : HttpTransport {
    override suspend fun send(request: HttpRequest): HttpResponse = withContext(Dispatchers.IO) {
        val connection = URL(request.url).openConnection() as HttpURLConnection
        try {
            connection.requestMethod = request.method
            connection.connectTimeout = minOf(request.timeoutMillis, 30_000)
            connection.readTimeout = request.timeoutMillis
            connection.instanceFollowRedirects = false
            connection.useCaches = false
            for ((name, value) in request.headers) connection.setRequestProperty(name, value)
            if (request.body != null) {
                // Not in streaming mode: HttpURLConnection then keeps the body of a 401 readable.
                connection.doOutput = true
                connection.outputStream.use { it.write(request.body) }
            }
            val status = connection.responseCode
            // Error statuses carry their body on the error stream.
            val stream: InputStream? = if (status >= 400) connection.errorStream else connection.inputStream
            val body = stream?.use { it.readBytes() } ?: ByteArray(0)
            val headers = LinkedHashMap<String, String>()
            for ((name, values) in connection.headerFields) {
                if (name != null && values.isNotEmpty()) headers[name.toLowerCase(java.util.Locale.ROOT)] = values.joinToString(",")
            }
            HttpResponse(status, headers, body)
        } finally {
            connection.disconnect()
        }
    }
}
