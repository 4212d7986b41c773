package countersign

import countersign.client.Authenticator
import countersign.core.ApprovalData
import countersign.core.AuthenticationChallenge
import countersign.core.DeviceProof
import countersign.core.EnrollmentLink
import countersign.core.ErrorCode
import countersign.core.LenientBase64
import countersign.core.PushPayload
import countersign.core.TransactionChallenge
import org.json.JSONObject
import org.junit.jupiter.api.Assertions.assertEquals
import org.junit.jupiter.api.Assertions.assertFalse
import org.junit.jupiter.api.Assertions.assertNotEquals
import org.junit.jupiter.api.Assertions.assertNotNull
import org.junit.jupiter.api.Assertions.assertNull
import org.junit.jupiter.api.Assertions.assertThrows
import org.junit.jupiter.api.Assertions.assertTrue
import org.junit.jupiter.api.DisplayName
import org.junit.jupiter.api.Test
import java.security.KeyFactory
import java.security.Signature
import java.security.spec.X509EncodedKeySpec

/** The SDK against the vectors shared with the Swift SDK: the same bytes from the same inputs. */
@DisplayName("Shared vectors (countersign-vectors.json)")
class VectorsTest {
    @Test
    @DisplayName("approval data is canonicalised with sorted keys and no whitespace")
    fun canonicalJson() {
        for (vector in Vectors.list("canonical_json")) {
            val data = ApprovalData(Vectors.map(vector.getJSONObject("approval_data")))
            assertEquals(vector.getString("canonical"), data.canonicalJson)
        }
    }

    @Test
    @DisplayName("the transaction challenge is base64url(SHA-256(domain, canonical JSON, nonce)), and differs when a value does")
    fun transactionChallenges() {
        val seen = HashSet<String>()
        for (vector in Vectors.list("transaction_challenges")) {
            val data = ApprovalData(Vectors.map(vector.getJSONObject("approval_data")))
            val challenge = TransactionChallenge.derive(data, vector.getString("nonce"))
            assertEquals(vector.getString("challenge"), challenge, data.canonicalJson)
            assertEquals(challenge, TransactionChallenge.derive(data, TransactionChallenge.nonceBytes(vector.getString("nonce"))!!))
            assertFalse(AuthenticationChallenge.isAuthentication(challenge!!))
            assertTrue(seen.add(challenge))
        }
    }

    @Test
    @DisplayName("a nonce that is not 32 bytes in base64url without padding yields no challenge")
    fun noncesRefused() {
        for (nonce in Vectors.strings("nonces_refused")) {
            assertNull(TransactionChallenge.nonceBytes(nonce), nonce)
            assertNull(TransactionChallenge.derive(ApprovalData(mapOf("amount" to "1")), nonce), nonce)
        }
    }

    @Test
    @DisplayName("approval data breaking a rule is refused, naming the key")
    fun approvalDataRefused() {
        for (vector in Vectors.list("approval_data_refused")) {
            val values = Vectors.map(vector.getJSONObject("approval_data"))
            val violation = assertThrows(ApprovalData.Violation::class.java) { ApprovalData(values) }
            val key = if (vector.isNull("key")) null else vector.getString("key")
            assertEquals(key, violation.key)
            if (key != null) assertTrue(violation.message!!.contains("'$key'"))
        }
        assertThrows(ApprovalData.Violation::class.java) { ApprovalData.fromJson(JSONObject().put("amount", 10)) }
        assertThrows(ApprovalData.Violation::class.java) { ApprovalData.fromJson(JSONObject().put("nested", JSONObject().put("a", "b"))) }
        assertThrows(ApprovalData.Violation::class.java) { ApprovalData.fromJson("text") }
    }

    @Test
    @DisplayName("device proofs and device-signed requests sign the documented messages, fresh within two minutes")
    fun deviceMessages() {
        for (vector in Vectors.list("device_proofs")) {
            assertEquals(vector.getString("message"), DeviceProof.approveMessage(vector.getString("approval_id"), vector.getLong("timestamp")))
        }
        for (vector in Vectors.list("device_requests")) {
            assertEquals(
                vector.getString("message"),
                DeviceProof.requestMessage(vector.getString("method"), vector.getString("path_with_query"), vector.getLong("timestamp")))
        }
        for (vector in Vectors.list("clock_skew")) {
            assertEquals(vector.getBoolean("fresh"), DeviceProof.isFresh(1_700_000_000L + vector.getLong("offset"), 1_700_000_000L))
        }
    }

    @Test
    @DisplayName("a key's id is base64url of the first 16 bytes of SHA-256 of its SPKI")
    fun publicKeyIds() {
        for (vector in Vectors.list("public_key_ids")) {
            assertEquals(vector.getString("public_key_id"), Authenticator.publicKeyId(LenientBase64.decode(vector.getString("spki"))!!))
        }
    }

    @Test
    @DisplayName("the signatures in the vectors verify as P-256 SHA-256 DER over the UTF-8 message, and not over another")
    fun signatures() {
        for (vector in Vectors.list("signatures")) {
            val key = KeyFactory.getInstance("EC").generatePublic(X509EncodedKeySpec(LenientBase64.decode(vector.getString("spki"))))
            fun verifies(message: String): Boolean = Signature.getInstance("SHA256withECDSA").run {
                initVerify(key)
                update(message.toByteArray(Charsets.UTF_8))
                verify(LenientBase64.decode(vector.getString("signature_der")))
            }
            assertTrue(verifies(vector.getString("message")))
            assertFalse(verifies(vector.getString("message") + " "))
        }
    }

    @Test
    @DisplayName("only a sign-in's challenge reads as one")
    fun authenticationChallenges() {
        for (vector in Vectors.list("authentication_challenges")) {
            assertEquals(vector.getBoolean("is_authentication"), AuthenticationChallenge.isAuthentication(vector.getString("challenge")))
        }
    }

    @Test
    @DisplayName("enrollment links are read for https servers and the loopback only, and match the app's server however it is written")
    fun enrollmentLinks() {
        for (vector in Vectors.list("enrollment_links")) {
            val link = EnrollmentLink.parse(vector.getString("uri"))
            val expected = vector.optJSONObject("link")
            if (expected == null) {
                assertNull(link, vector.getString("uri"))
            } else {
                assertNotNull(link, vector.getString("uri"))
                assertEquals(expected.getString("server"), link!!.server)
                assertEquals(if (expected.isNull("client_id")) null else expected.getString("client_id"), link.clientId)
                assertEquals(expected.getString("code"), link.code)
                assertEquals(link, EnrollmentLink.parse(link.uri))
            }
        }
        for (vector in Vectors.list("enrollment_link_servers")) {
            val link = EnrollmentLink(vector.getString("link_server"), null, "ABCD-EFGH")
            assertEquals(vector.getBoolean("is_for"), link.isFor(vector.getString("app_server")), vector.toString())
        }
    }

    @Test
    @DisplayName("an FCM data message names the approval to open; other messages name none")
    fun pushPayloads() {
        for (vector in Vectors.list("push_payloads")) {
            val data = Vectors.map(vector.getJSONObject("data"))
            val payload = PushPayload.fromFcmData(data)
            if (vector.isNull("approval_id")) {
                assertNull(payload, data.toString())
            } else {
                assertEquals(vector.getString("approval_id"), payload!!.approvalId)
                assertEquals(data, payload.values)  // handed back unchanged
                assertEquals(payload, PushPayload.fromJson(vector.getJSONObject("data")))
            }
        }
        assertNull(PushPayload.fromJson(JSONObject().put("approval_id", "apr_1").put("client_id", 7)))
    }

    @Test
    @DisplayName("base64 is read in either alphabet, padded or not")
    fun base64() {
        for (vector in Vectors.list("base64")) {
            val bytes = LenientBase64.decode(vector.getString("text"))
            if (vector.isNull("hex")) assertNull(bytes, vector.getString("text"))
            else assertEquals(vector.getString("hex"), Vectors.hex(bytes!!), vector.getString("text"))
        }
        val all = ByteArray(256) { it.toByte() }
        for (size in 0..40) {
            val bytes = all.copyOf(size)
            assertEquals(Vectors.hex(bytes), Vectors.hex(LenientBase64.decode(LenientBase64.urlEncode(bytes)) ?: ByteArray(0)))
            assertEquals(Vectors.hex(bytes), Vectors.hex(LenientBase64.decode(LenientBase64.encode(bytes)) ?: ByteArray(0)))
            assertEquals(java.util.Base64.getEncoder().encodeToString(bytes), LenientBase64.encode(bytes))
            assertEquals(java.util.Base64.getUrlEncoder().withoutPadding().encodeToString(bytes), LenientBase64.urlEncode(bytes))
        }
    }

    @Test
    @DisplayName("every wire error code has its typed value; an unknown code and http_NNN read as such")
    fun errorCodes() {
        val codes = Vectors.strings("error_codes")
        for (code in codes) {
            val typed = ErrorCode.of(code)
            assertNotEquals(ErrorCode.UNKNOWN, typed, code)
            assertEquals(code, typed.wire)
        }
        val named = ErrorCode.values().filter { it != ErrorCode.UNKNOWN && it != ErrorCode.HTTP_STATUS }.map { it.wire }
        assertEquals(codes.toSet(), named.toSet())
        assertEquals(ErrorCode.HTTP_STATUS, ErrorCode.of("http_405"))
        assertEquals(ErrorCode.UNKNOWN, ErrorCode.of("http_"))
        assertEquals(ErrorCode.UNKNOWN, ErrorCode.of("brand_new_code"))
    }
}
