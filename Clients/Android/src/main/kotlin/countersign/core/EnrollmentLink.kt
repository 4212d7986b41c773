package countersign.core

import java.net.URI
import java.net.URISyntaxException
import java.net.URLDecoder
import java.net.URLEncoder
import java.util.Locale

/**
 * What the enrollment QR code carries: `countersign://enroll?server=…&client_id=…&code=…`, the server to
 * register with, through which native client, and the one-time code.
 *
 * Anyone can print such a code, so an app registers only with the server it was built for ([isFor]): a
 * link naming another server would have the phone take that server's requests for its bank's. A link
 * whose server is not https (but the phone's own loopback, in development) is not read at all: the code
 * would cross the network in clear.
 */
class EnrollmentLink(val server: String, val clientId: String?, val code: String) {

    /**
     * Whether the link names [expected] (scheme, host, port and path; the host in any case, a default
     * port written or not).
     */
    fun isFor(expected: String): Boolean {
        val named = origin(server) ?: return false
        val wanted = origin(expected) ?: return false
        return named == wanted
    }

    /** The link as a URI, for a QR code. */
    val uri: String
        get() {
            val items = mutableListOf("server" to server)
            clientId?.let { items.add("client_id" to it) }
            items.add("code" to code)
            return "$SCHEME://enroll?" + items.joinToString("&") { "${it.first}=${encode(it.second)}" }
        }

    override fun equals(other: Any?): Boolean =
        other is EnrollmentLink && other.server == server && other.clientId == clientId && other.code == code
    override fun hashCode(): Int = listOf(server, clientId, code).hashCode()
    override fun toString(): String = "EnrollmentLink(server=$server, clientId=$clientId)"

    private data class Origin(val scheme: String, val host: String, val port: Int, val path: String)

    companion object {
        const val SCHEME = "countersign"

        /** Reads a scanned link; null when it is not an enrollment link, or names a server that is not https (http only on the loopback). */
        fun parse(uri: String): EnrollmentLink? {
            val parsed = try { URI(uri.trim()) } catch (ignored: URISyntaxException) { return null }
            if (parsed.scheme != SCHEME || parsed.host != "enroll") return null
            val items = query(parsed.rawQuery ?: return null) ?: return null
            val server = items["server"] ?: return null
            val code = items["code"] ?: return null
            if (!isFollowable(server)) return null
            return EnrollmentLink(server, items["client_id"], code)
        }

        /** Whether a phone may send an enrollment code to [server]: https, or http on its own loopback. */
        fun isFollowable(server: String): Boolean {
            val origin = origin(server) ?: return false
            return origin.scheme == "https" || origin.host in listOf("127.0.0.1", "::1", "[::1]", "localhost")
        }

        /** The first value of each query item, percent-decoded (a `+` stays a plus, as in a URI). */
        private fun query(raw: String): Map<String, String>? {
            val items = LinkedHashMap<String, String>()
            for (part in raw.split('&')) {
                if (part.length == 0) continue
                val equals = part.indexOf('=')
                val name = decode(if (equals < 0) part else part.substring(0, equals)) ?: return null
                val value = decode(if (equals < 0) "" else part.substring(equals + 1)) ?: return null
                if (name !in items) items[name] = value
            }
            return items
        }

        private fun decode(text: String): String? =
            try { URLDecoder.decode(text.replace("+", "%2B"), "UTF-8") } catch (ignored: IllegalArgumentException) { null }

        /** Percent-encodes what a query value may not hold as it is; `:` and `/` stay readable. */
        private fun encode(text: String): String =
            URLEncoder.encode(text, "UTF-8").replace("+", "%20").replace("%3A", ":").replace("%2F", "/")

        private fun origin(server: String): Origin? {
            val uri = try { URI(server) } catch (ignored: URISyntaxException) { return null }
            val scheme = uri.scheme?.toLowerCase(Locale.ROOT) ?: return null
            if (scheme != "http" && scheme != "https") return null
            // A server written with a user ("https://user@host") is refused: it reads as one host and goes to another in some parsers.
            if (uri.rawUserInfo != null || uri.rawAuthority?.contains('@') == true) return null
            val host = uri.host?.toLowerCase(Locale.ROOT)
            if (host.isNullOrEmpty()) return null
            val path = (uri.rawPath ?: "").removeSuffix("/")
            val port = if (uri.port >= 0) uri.port else if (scheme == "https") 443 else 80
            return Origin(scheme, host, port, path)
        }
    }
}
