package countersign.core

/**
 * Base64 as the server writes and reads it: either the standard or the URL-safe alphabet, padding
 * optional (DESIGN.md §2). Written here rather than taken from `java.util.Base64`, which Android has only
 * from API 26, and `android.util.Base64`, which the JVM lacks.
 */
object LenientBase64 {
    private const val STANDARD = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    private const val URL_SAFE = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

    private val values = IntArray(128) { -1 }.also { table ->
        STANDARD.forEachIndexed { index, char -> table[char.toInt()] = index }
        table['-'.toInt()] = 62
        table['_'.toInt()] = 63
    }

    /** base64url without padding: the form of challenges, nonces and ids. */
    fun urlEncode(bytes: ByteArray): String = encode(bytes, URL_SAFE, pad = false)

    /** Standard base64 with padding: the form of public keys and signatures the SDK sends. */
    fun encode(bytes: ByteArray): String = encode(bytes, STANDARD, pad = true)

    /**
     * The bytes of [text] in either alphabet, padded or not, white space around it ignored; null when it
     * is not base64 (a character of neither alphabet, padding inside, or a length no encoding has). Unused
     * low bits of the last character are ignored: callers that need the one canonical form (the nonce)
     * encode the bytes again and compare.
     */
    fun decode(text: String): ByteArray? {
        var body = text.trim()
        body = body.trimEnd('=')
        if (body.length == 0 || body.length % 4 == 1) return null
        val output = ByteArray(body.length * 3 / 4)
        var buffer = 0
        var bits = 0
        var written = 0
        for (char in body) {
            val value = if (char.toInt() < 128) values[char.toInt()] else -1
            if (value < 0) return null
            buffer = (buffer shl 6) or value
            bits += 6
            if (bits >= 8) {
                bits -= 8
                output[written++] = (buffer shr bits).toByte()
                buffer = buffer and ((1 shl bits) - 1)
            }
        }
        return output
    }

    private fun encode(bytes: ByteArray, alphabet: String, pad: Boolean): String {
        val out = StringBuilder((bytes.size + 2) / 3 * 4)
        var index = 0
        while (index + 3 <= bytes.size) {
            val chunk = (bytes[index].toInt() and 0xff shl 16) or (bytes[index + 1].toInt() and 0xff shl 8) or (bytes[index + 2].toInt() and 0xff)
            out.append(alphabet[chunk shr 18 and 63]).append(alphabet[chunk shr 12 and 63])
                .append(alphabet[chunk shr 6 and 63]).append(alphabet[chunk and 63])
            index += 3
        }
        when (bytes.size - index) {
            1 -> {
                val chunk = bytes[index].toInt() and 0xff shl 16
                out.append(alphabet[chunk shr 18 and 63]).append(alphabet[chunk shr 12 and 63])
                if (pad) out.append("==")
            }
            2 -> {
                val chunk = (bytes[index].toInt() and 0xff shl 16) or (bytes[index + 1].toInt() and 0xff shl 8)
                out.append(alphabet[chunk shr 18 and 63]).append(alphabet[chunk shr 12 and 63]).append(alphabet[chunk shr 6 and 63])
                if (pad) out.append('=')
            }
        }
        return out.toString()
    }
}
